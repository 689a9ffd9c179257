/**
 * The published service terms (spec 8 and 9.3) and the one declaration of deprecated operations.
 *
 * `SERVICE_TERMS` is what the OpenAPI `info` (`x-service-terms`, `termsOfService`), the read-only
 * reference and docs/api.md publish. A `DeprecationTable` says, per operation, when it was (or
 * will be) deprecated, when it stops being served and where the migration note is. Both
 * consumers derive from that one table: the OpenAPI document (`applyDeprecations`: `deprecated:
 * true` and the headers on every response of the operation) and the server
 * (api/middleware/deprecation.ts: `Deprecation`, `Sunset` and `Link` on every response of it).
 * `checkDeprecations` holds the table to the terms: every sunset at least
 * `deprecationNoticeDays` after its deprecation date.
 *
 * @example
 *   // deprecating GET /v1/meta on 1 Feb 2027, removed on 3 May 2027 (91 days' notice):
 *   export const DEPRECATIONS: DeprecationTable = {
 *     'GET /meta': { deprecated_at: '2027-02-01', sunset: '2027-05-03', link: 'https://docs.example.ie/v1/meta-migration' },
 *   };
 */

/** The terms under which the API is offered, as numbers (every rendering derives from these). */
export const SERVICE_TERMS = {
  /** Share of each calendar month (UTC) the API is meant to answer keyed requests. */
  availabilityTargetPercent: 99.5,
  /** Least time between an operation's deprecation and its sunset. */
  deprecationNoticeDays: 90,
} as const;

/** One deprecated operation: dates as ISO 8601 (`2027-02-01` is midnight UTC), a migration note URL. */
export interface Deprecation {
  /** When the operation is (or becomes) deprecated; the `Deprecation` header. */
  readonly deprecated_at: string;
  /** When it stops being served; the `Sunset` header. At least 90 days after `deprecated_at`. */
  readonly sunset: string;
  /** Absolute http(s) URL of the deprecation and migration note; `Link: <…>; rel="deprecation"`. */
  readonly link: string;
}

/** Deprecated operations by `"METHOD /path"` as in the OpenAPI document (`GET /leads/{id}`). */
export type DeprecationTable = Readonly<Record<string, Deprecation>>;

/** The API's deprecations. None today: every operation of /v1 is current. */
export const DEPRECATIONS: DeprecationTable = {};

const DAY_MS = 86_400_000;

/** Milliseconds of an ISO 8601 date or date-time; NaN for anything else. */
function parseDate(s: string): number {
  return /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(s) ? Date.parse(s) : NaN;
}

/**
 * Throw (naming the entry) unless every entry names one of `operations` (`"GET /meta"`), has
 * valid dates, a sunset at least `SERVICE_TERMS.deprecationNoticeDays` after its deprecation,
 * and an absolute http(s) link that is safe to put in a header.
 */
export function checkDeprecations(table: DeprecationTable, operations: readonly string[]): void {
  const known = new Set(operations);
  for (const [op, d] of Object.entries(table)) {
    if (!known.has(op))
      throw new Error(
        `deprecation of ${op}: no such operation (use "METHOD /path" as in the OpenAPI document, e.g. "GET /leads/{id}")`,
      );
    const from = parseDate(d.deprecated_at);
    const until = parseDate(d.sunset);
    if (!Number.isFinite(from))
      throw new Error(`deprecation of ${op}: deprecated_at ${JSON.stringify(d.deprecated_at)} is not an ISO 8601 date`);
    if (!Number.isFinite(until))
      throw new Error(`deprecation of ${op}: sunset ${JSON.stringify(d.sunset)} is not an ISO 8601 date`);
    const days = (until - from) / DAY_MS;
    if (days < SERVICE_TERMS.deprecationNoticeDays) {
      throw new Error(
        `deprecation of ${op}: the sunset is ${Math.floor(days)} days after the deprecation; the service terms promise at least ${SERVICE_TERMS.deprecationNoticeDays}`,
      );
    }
    let url: URL | null = null;
    try {
      url = new URL(d.link);
    } catch {
      // reported below
    }
    if (!url || !/^https?:$/.test(url.protocol) || /[\s<>"\\]/.test(d.link)) {
      throw new Error(`deprecation of ${op}: link ${JSON.stringify(d.link)} must be an absolute http(s) URL`);
    }
  }
}

/** The response headers of a deprecated operation: RFC 9745 `Deprecation`, RFC 8594 `Sunset`, the `Link`. */
export function deprecationHeaders(d: Deprecation): { Deprecation: string; Sunset: string; Link: string } {
  return {
    // RFC 9745: a Structured Field Date, i.e. `@` and Unix seconds
    Deprecation: `@${Math.floor(parseDate(d.deprecated_at) / 1000)}`,
    // RFC 8594: an HTTP-date (IMF-fixdate, which toUTCString writes)
    Sunset: new Date(parseDate(d.sunset)).toUTCString(),
    Link: `<${d.link}>; rel="deprecation"; type="text/html"`,
  };
}

/** The service terms as the OpenAPI `info` extension `x-service-terms`. */
export function serviceTermsExtension(): Record<string, unknown> {
  return {
    availability_target_percent: SERVICE_TERMS.availabilityTargetPercent,
    availability_period: 'calendar month (UTC)',
    deprecation_notice_days: SERVICE_TERMS.deprecationNoticeDays,
    deprecation_signals: [
      'OpenAPI `deprecated: true`',
      'Deprecation header (RFC 9745)',
      'Sunset header (RFC 8594)',
      'Link rel="deprecation"',
    ],
  };
}

/** The service terms as a paragraph of the OpenAPI `info.description` (Markdown). */
export function serviceTermsText(): string {
  return (
    `Service terms: availability target ${SERVICE_TERMS.availabilityTargetPercent}% per calendar month (UTC). ` +
    `An operation is deprecated with at least ${SERVICE_TERMS.deprecationNoticeDays} days' notice before it stops being served: ` +
    'it is marked `deprecated: true` here, and every response of it carries `Deprecation` (RFC 9745, when it was deprecated), ' +
    '`Sunset` (RFC 8594, when it goes) and `Link: <…>; rel="deprecation"` (the migration note).'
  );
}

type Json = Record<string, any>;

/**
 * Mark the table's operations in the OpenAPI `paths` (as built, relative to /v1): `deprecated:
 * true`, `x-deprecation` with the declared dates and link, a sentence in the description, and the
 * three headers on every response. Throws on an entry naming no operation of `paths`.
 */
export function applyDeprecations(paths: Json, table: DeprecationTable): void {
  const operations = Object.entries<Json>(paths).flatMap(([path, item]) =>
    Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
  );
  checkDeprecations(table, operations);
  for (const [key, d] of Object.entries(table)) {
    const space = key.indexOf(' ');
    const op = paths[key.slice(space + 1)][key.slice(0, space).toLowerCase()] as Json;
    const h = deprecationHeaders(d);
    op.deprecated = true;
    op['x-deprecation'] = { deprecated_at: d.deprecated_at, sunset: d.sunset, link: d.link };
    op.description =
      `${op.description ?? ''}\n\n**Deprecated** since ${d.deprecated_at}; stops being served at ${d.sunset} (\`Sunset: ${h.Sunset}\`). Migration: ${d.link}`.trim();
    for (const res of Object.values<Json>(op.responses ?? {})) {
      res.headers ??= {};
      res.headers['Deprecation'] = {
        description: 'RFC 9745: when this operation was (or will be) deprecated, as `@` and Unix seconds.',
        schema: { type: 'string', const: h.Deprecation },
      };
      res.headers['Sunset'] = {
        description: 'RFC 8594: when this operation stops being served, an HTTP-date.',
        schema: { type: 'string', const: h.Sunset },
      };
      res.headers['Link'] ??= {
        description: `Among the links, the deprecation and migration note: \`${h.Link}\`.`,
        schema: { type: 'string' },
      };
    }
  }
}
