/**
 * Types derived from the generated OpenAPI types (src/generated/openapi.ts, made by
 * scripts/generate-types.ts): the GET paths, their query and path parameters, their JSON body,
 * and the paged lists among them (a body with `results` and `next_cursor`).
 */
import type { components, paths } from './generated/openapi.ts';

export type { components, paths };
export type Schemas = components['schemas'];

/** Every path with a GET operation. */
export type GetPath = { [P in keyof paths]: paths[P] extends { get: { responses: unknown } } ? P : never }[keyof paths];
type GetOp<P extends GetPath> = paths[P] extends { get: infer O } ? O : never;

/** The query parameters of `GET path` (without `dry_run`: `quote()` asks for a quote). */
export type QueryOf<P extends GetPath> =
  GetOp<P> extends { parameters: { query?: infer Q } } ? Omit<NonNullable<Q>, 'dry_run'> : never;
/** The path parameters of `GET path` (`{ id }` for `/leads/{id}`). */
export type PathParamsOf<P extends GetPath> =
  GetOp<P> extends { parameters: { path: infer Q } } ? (Q extends Record<string, unknown> ? Q : never) : never;
/** The `application/json` body of `GET path`'s 200 answer (never the quote: it has a media type of its own). */
export type JsonOf<P extends GetPath> =
  GetOp<P> extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;

/** The GET paths answering a page of a list: `results` and `next_cursor` (leads, exports, infrastructure, …). */
export type PagedPath = {
  [P in GetPath]: JsonOf<P> extends { results: unknown[]; next_cursor: unknown } ? P : never;
}[GetPath];
/** One item of a paged list. */
export type ItemOf<P extends PagedPath> = JsonOf<P> extends { results: (infer I)[] } ? I : never;

export type BudgetQuote = Schemas['BudgetQuote'];
export type ProblemBody = Schemas['Problem'];
