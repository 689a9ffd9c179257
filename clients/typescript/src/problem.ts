/**
 * The one error the SDK throws for an answer that is not a success: the API's RFC 9457 problem
 * (docs/api.md "Errors") with its stable `code`, and the limits the answer reported.
 */
import type { ProblemBody } from './types.ts';
import type { Limits } from './limits.ts';

/**
 * An RFC 9457 problem from the API: `status`, the stable machine `code` (`rate_limited`,
 * `invalid_parameter`, `budget_exhausted`, …), `detail`, the per-parameter `errors` of a 400,
 * and `retryAfterS` when the server said when to try again.
 *
 * @example
 *   try { await client.get('/leads', { query: { county: ['Nowhere'] } }); }
 *   catch (e) { if (e instanceof LeadsProblem && e.code === 'invalid_parameter') console.log(e.errors); }
 */
export class LeadsProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly requestId: string | null;
  readonly errors: NonNullable<ProblemBody['errors']>;
  readonly retryAfterS: number | null;
  readonly problem: ProblemBody;
  readonly limits: Limits;
  constructor(problem: ProblemBody, limits: Limits, retryAfterS: number | null) {
    super(`${problem.status} ${problem.code}: ${problem.detail ?? problem.title}`);
    this.problem = problem;
    this.limits = limits;
    this.name = 'LeadsProblem';
    this.status = problem.status;
    this.code = problem.code;
    this.detail = problem.detail ?? problem.title;
    this.requestId = problem.request_id ?? null;
    this.errors = problem.errors ?? [];
    this.retryAfterS = retryAfterS;
  }
}

/** The problem of a non-2xx answer; a body that is not a problem (a proxy's page) becomes `http_<status>`. */
export async function problemOf(res: Response, limits: Limits, retryAfterS: number | null): Promise<LeadsProblem> {
  const text = await res.text();
  let body: ProblemBody;
  try {
    body = JSON.parse(text) as ProblemBody;
    if (typeof body?.code !== 'string') throw new Error('not a problem');
  } catch {
    body = {
      type: 'about:blank',
      title: res.statusText || `HTTP ${res.status}`,
      status: res.status,
      code: `http_${res.status}`,
      detail: text.slice(0, 500),
    } as ProblemBody;
  }
  return new LeadsProblem(body, limits, retryAfterS);
}
