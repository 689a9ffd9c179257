/** What the middleware chain puts on `ctx.state` for the route handlers. */
import type { ParameterizedContext } from 'koa';
import type { Release } from '../releases/release.ts';
import type { ApiKey } from '../state/store-interface.ts';
import type { RowBudget } from '../access/budget.ts';

export interface AppState {
  requestId: string;
  /** The release this request is answered from (pinned for the whole request). */
  release: Release;
  /** The authenticated key (absent only on the unauthenticated docs assets). */
  key: ApiKey;
  /** The key's daily row budget: the records a route serves are charged by `charging` (api/access/budget.ts). */
  budget: RowBudget;
  /** Records this request was charged (set by the access middleware; the access log and metrics read it). */
  rowsCharged?: number;
  /** The route template the request is counted under (`GET /v1/leads/{id}`), set once by the access middleware and read by the access log. */
  route?: string;
}

export type AppContext = ParameterizedContext<AppState>;
