/**
 * `GET /v1/problems` and `GET /v1/problems/{code}`: what each problem `type` URI names, for people
 * (HTML, the default) and programs (`Accept: application/json`), from the one problem table
 * (api/http/problems.ts). Public: no key, no release needed.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { notFound, problemType } from '../http/errors.ts';
import { isProblemCode } from '../http/problems.ts';
import { problemDoc, problemDocs, problemPage, problemsIndexPage } from '../render/problems-html.ts';
import { REFERENCE_CSP } from './docs.ts';

/** The problems router (paths relative to the /v1 mount). */
export function problemsRouter(config: Pick<ApiConfig, 'publicBaseUrl'>): Router<AppState> {
  const router = new Router<AppState>();
  const typeUri = (code: Parameters<typeof problemType>[0]): string => problemType(code, config.publicBaseUrl);
  /** JSON when the client prefers it to HTML (a browser gets HTML, `Accept: application/json` JSON). */
  const answer = (ctx: AppContext, json: unknown, html: () => string): void => {
    ctx.vary('Accept');
    ctx.set('Cache-Control', 'public, max-age=3600');
    if (ctx.accepts('html', 'json') === 'json') {
      ctx.body = json;
      return;
    }
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', REFERENCE_CSP);
    ctx.body = html();
  };
  router.get('/problems', (ctx: AppContext) => {
    const docs = problemDocs(typeUri);
    answer(ctx, { problems: docs }, () => problemsIndexPage(docs));
  });
  router.get('/problems/:code', (ctx: AppContext) => {
    const code = ctx.params['code'] ?? '';
    if (!isProblemCode(code)) throw notFound(`problem type ${code}`);
    const doc = problemDoc(code, typeUri);
    answer(ctx, doc, () => problemPage(doc));
  });
  return router;
}
