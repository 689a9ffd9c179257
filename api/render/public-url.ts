/**
 * Absolute URLs of the API's own resources (`Location` of a created resource): under
 * PUBLIC_BASE_URL when the operator set it, else under the origin the request came to
 * (`X-Forwarded-Proto` / `-Host` with TRUST_PROXY=1), never the built-in
 * `http://localhost:8080/v1` default a client elsewhere could not reach.
 */
import type { ParameterizedContext } from 'koa';
import { API_DEFAULTS, type ApiConfig } from '../config.ts';

/**
 * The public base of the API including `/v1`, without a trailing slash.
 *
 * @example publicUrl(ctx, config, '/webhooks/wh_0123456789abcdef') // 'https://api.example.ie/v1/webhooks/wh_0123456789abcdef'
 */
export function publicUrl(ctx: ParameterizedContext, config: Pick<ApiConfig, 'publicBaseUrl'>, path: string): string {
  const set = config.publicBaseUrl !== API_DEFAULTS.publicBaseUrl.value;
  return `${set ? config.publicBaseUrl : `${ctx.protocol}://${ctx.host}/v1`}${path}`;
}
