/**
 * The API's one error model. Every failure is an `ApiError` (status, stable machine `code`,
 * whether the message may be shown, extra headers, per-parameter `errors`), and one middleware,
 * first in the chain, turns any thrown error into the same RFC 9457 `application/problem+json`
 * body (schema: schemas/problem.schema.json). Unknown errors become a generic 500 that leaks
 * nothing and are logged with the request id.
 */
import type { Middleware } from 'koa';
import { PROBLEM_TYPES, problemTypeUri, type ProblemCode } from './problems.ts';

/** One problem with one request parameter. */
export interface ParamError {
  name: string;
  reason: string;
  allowed?: (string | number)[];
}

/**
 * The `type` of a problem: the URI of the code's page (`GET /v1/problems/{code}`) under the public
 * base URL, or — without one (an app built in a test) — the path `/v1/problems/<code>`, a relative
 * reference that resolves against the request's own origin.
 */
export function problemType(code: ProblemCode, publicBaseUrl?: string): string {
  return publicBaseUrl ? problemTypeUri(publicBaseUrl, code) : `/v1/problems/${code}`;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly title: string;
  /** False for errors whose message must not reach the client (the generic 500). */
  readonly expose: boolean;
  readonly headers: Record<string, string>;
  readonly errors: ParamError[] | undefined;
  readonly extra: Record<string, unknown>;

  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    opts: {
      title?: string;
      headers?: Record<string, string>;
      errors?: ParamError[];
      expose?: boolean;
      extra?: Record<string, unknown>;
    } = {},
  ) {
    super(detail);
    this.status = status;
    this.code = code;
    this.title = opts.title ?? PROBLEM_TYPES[code].title;
    this.expose = opts.expose ?? status !== 500; // a 503 (no_release, service_degraded) says why
    this.headers = opts.headers ?? {};
    this.errors = opts.errors;
    this.extra = opts.extra ?? {};
  }
}

/** Seconds a client is told to wait (`Retry-After`) while the state store cannot be written. */
export const DEGRADED_RETRY_AFTER_S = 10;

/**
 * 503 `service_degraded`: the state store (keys, rate counters, budgets, ledger) cannot be read or
 * written — disk full, a read-only file, a lock held too long, PostgreSQL unreachable. Data
 * requests are refused rather than served uncounted; the usage ledger keeps what it could not
 * write in memory and writes it when the store recovers.
 */
export class StoreUnavailableError extends ApiError {
  constructor(cause: unknown) {
    super(
      503,
      'service_degraded',
      `the service is degraded: its state store cannot record this request right now; retry in ${DEGRADED_RETRY_AFTER_S} seconds`,
      {
        headers: { 'Retry-After': String(DEGRADED_RETRY_AFTER_S) },
      },
    );
    this.cause = cause;
  }
}

/** 400 for one or more bad parameters; `detail` names each one. */
export function invalidParams(errors: ParamError[]): ApiError {
  const unknown = errors.every((e) => e.reason === 'unknown parameter');
  const detail = errors
    .map((e) => `${e.name}: ${e.reason}${e.allowed ? ` (allowed: ${e.allowed.join(', ')})` : ''}`)
    .join('; ');
  return new ApiError(400, unknown ? 'unknown_parameter' : 'invalid_parameter', detail, { errors });
}

export const notFound = (what: string): ApiError => new ApiError(404, 'not_found', `${what} was not found`);

/**
 * First middleware of the chain: renders every error as RFC 9457 problem+json with
 * `type`, `title`, `status`, `detail`, `instance`, `code`, `request_id` and, for parameter
 * errors, `errors`. Headers carried by the error (WWW-Authenticate, Retry-After…) are kept.
 * `type` is the code's page under `opts.publicBaseUrl` (`problemType`).
 */
export function problemMiddleware(
  log: (line: string) => void = (l) => void process.stderr.write(l + '\n'),
  opts: { publicBaseUrl?: string } = {},
): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError(404, 'not_found', `no endpoint at ${ctx.path}`);
      }
    } catch (e) {
      const requestId = String(ctx.state['requestId'] ?? '');
      let err: ApiError;
      if (e instanceof ApiError) {
        err = e;
        if (e instanceof StoreUnavailableError)
          log(
            `request ${requestId}: state store unavailable (answered 503): ${(e.cause as Error)?.message ?? String(e.cause)}`,
          );
      } else if (isHttpError(e) && e.status < 500)
        err = new ApiError(e.status, 'bad_request', e.expose ? e.message : 'bad request');
      else {
        log(`request ${requestId} failed: ${(e as Error)?.stack ?? String(e)}`);
        err = new ApiError(
          500,
          'internal_error',
          'the server could not answer this request; quote the request id when you report it',
          { expose: false },
        );
      }
      ctx.status = err.status;
      for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
      ctx.remove('ETag');
      ctx.remove('Last-Modified');
      // a problem is never a download (an export's `attachment` would save it as a .csv)
      ctx.remove('Content-Disposition');
      ctx.type = 'application/problem+json';
      ctx.body = {
        type: problemType(err.code, opts.publicBaseUrl),
        title: err.title,
        status: err.status,
        detail: err.expose ? err.message : 'internal error',
        instance: ctx.originalUrl.replace(/([?&](api_key|key|token|access_token)=)[^&]*/gi, '$1REDACTED'),
        code: err.code,
        request_id: requestId,
        ...(err.errors ? { errors: err.errors } : {}),
        ...err.extra,
      };
    }
  };
}

function isHttpError(e: unknown): e is { status: number; expose: boolean; message: string } {
  return typeof e === 'object' && e !== null && typeof (e as { status?: unknown }).status === 'number';
}
