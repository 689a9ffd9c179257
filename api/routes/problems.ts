/**
 * `GET /v1/problems` and `GET /v1/problems/{code}`: what each problem `type` URI names, for people
 * (HTML, the default) and programs (`Accept: application/json`), from the one problem table
 * (api/http/problems.ts). Public: no key, no release needed.
 */
import Router from '@koa/router';
import type { ApiConfig } from '../config.ts';
import type { AppContext, AppState } from '../http/context.ts';
import { notFound, problemType } from '../http/errors.ts';
import { isProblemCode, PROBLEM_CODES } from '../http/problems.ts';
import { mount, type Operation } from './operation.ts';
import { schemaRef } from '../openapi/endpoint.ts';
import { problemDoc, problemDocs, problemPage, problemsIndexPage } from '../render/problems-html.ts';
import { REFERENCE_CSP } from './docs.ts';

/** What the problem-type operations share: the URI of a code's page. */
interface ProblemsEnv {
  typeUri: (code: Parameters<typeof problemType>[0]) => string;
}

/** JSON when the client prefers it to HTML (a browser gets HTML, `Accept: application/json` JSON). */
function answer(ctx: AppContext, json: unknown, html: () => string): void {
  ctx.vary('Accept');
  ctx.set('Cache-Control', 'public, max-age=3600');
  if (ctx.accepts('html', 'json') === 'json') {
    ctx.body = json;
    return;
  }
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', REFERENCE_CSP);
  ctx.body = html();
}

/** The problem-type operations (paths relative to the /v1 mount). */
export const PROBLEMS_OPERATIONS: readonly Operation<ProblemsEnv>[] = [
  {
    method: 'get',
    path: '/problems',
    tag: 'Reference',
    public: true,
    summary: 'Every problem type',
    description:
      "The index of the problem types: every `code` an error of this API can carry, with its status and title. A problem's `type` is the URI of its code's page, `/v1/problems/{code}` under the public base URL. HTML by default; JSON with `Accept: application/json`. No key needed.",
    ok: {
      schema: schemaRef('ProblemTypes'),
      description: 'The problem types (HTML, or JSON with `Accept: application/json`).',
      alternate: { type: 'text/html', schema: { type: 'string' } },
    },
    errors: [],
    handler: (ctx, { typeUri }) => {
      const docs = problemDocs(typeUri);
      answer(ctx, { problems: docs }, () => problemsIndexPage(docs));
    },
  },
  {
    method: 'get',
    path: '/problems/{code}',
    tag: 'Reference',
    public: true,
    summary: 'One problem type: what it means and what to do',
    description:
      "The page a problem's `type` URI names: the code's status, title, what happened and what to do. HTML by default; JSON with `Accept: application/json`. No key needed.",
    pathParams: [
      {
        name: 'code',
        in: 'path',
        required: true,
        description: 'A problem `code`.',
        schema: { type: 'string', enum: PROBLEM_CODES },
      },
    ],
    ok: {
      schema: schemaRef('ProblemTypeDoc'),
      description: 'The problem type (HTML, or JSON with `Accept: application/json`).',
      alternate: { type: 'text/html', schema: { type: 'string' } },
    },
    errors: [404],
    handler: (ctx, { typeUri }) => {
      const code = ctx.params['code'] ?? '';
      if (!isProblemCode(code)) throw notFound(`problem type ${code}`);
      const doc = problemDoc(code, typeUri);
      answer(ctx, doc, () => problemPage(doc));
    },
  },
];

/** The problems router (paths relative to the /v1 mount). */
export function problemsRouter(config: Pick<ApiConfig, 'publicBaseUrl'>): Router<AppState> {
  return mount(PROBLEMS_OPERATIONS, { typeUri: (code) => problemType(code, config.publicBaseUrl) });
}
