/**
 * The TypeScript SDK of the Irish construction-leads API (README "Clients"). Everything is typed
 * from the API's OpenAPI document (scripts/generate-types.ts).
 */
export {
  LeadsClient,
  queryString,
  type Answer,
  type ClientOptions,
  type ExportFormat,
  type QueryValue,
} from './client.ts';
export { LeadsProblem } from './problem.ts';
export { limitsOf, retryDelayMs, type Limits } from './limits.ts';
export { verifyWebhook, type VerifyOptions } from './webhooks.ts';
export type * from './types.ts';
