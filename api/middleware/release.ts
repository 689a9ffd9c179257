/**
 * Pin the current release for the whole request (`ctx.state.release`), so a release published
 * mid-request never changes or unloads the tables under it. The pin is let go when the
 * response has been sent or the connection closed — after streaming bodies too.
 */
import type { Middleware } from 'koa';
import { ApiError } from '../http/errors.ts';
import { NoReleaseError, type ReleaseManager } from '../releases/release.ts';

export function releaseMiddleware(releases: Pick<ReleaseManager, 'acquire'>): Middleware {
  return async (ctx, next) => {
    let pin: ReturnType<ReleaseManager['acquire']>;
    try {
      pin = releases.acquire();
    } catch (e) {
      if (e instanceof NoReleaseError) {
        throw new ApiError(503, 'no_release', 'no data release is loaded yet; try again later', {
          headers: { 'Retry-After': '30' },
        });
      }
      throw e;
    }
    ctx.state['release'] = pin.release;
    ctx.res.once('finish', pin.done);
    ctx.res.once('close', pin.done);
    await next();
  };
}
