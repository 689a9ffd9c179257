/**
 * The query of `GET /v1/account/usage` (api/routes/account.ts), also read by the account area's
 * usage page and the OpenAPI document: `from` / `to`, validated by the one query parser.
 */
import { invalidParams, type ParamError } from '../http/errors.ts';
import { daysBefore, isDay } from '../access/limits.ts';
import { parseQuery, querySchema, type RawQuery } from './parse-query.ts';

/** Longest range one request may ask for (ten years of daily totals). */
export const MAX_USAGE_DAYS = 3660;
export const DEFAULT_USAGE_DAYS = 30;

/** The query schema of this endpoint (`schemas/account-usage-query.schema.json`). */
export const USAGE_QUERY_SCHEMA = querySchema('account-usage-query.schema.json');

/** `from` / `to`: a calendar day of 1970 or later (`isDay`), in this endpoint's wording, which quotes the value. */
const day =
  (name: string) =>
  (text: string): string | ParamError =>
    isDay(text)
      ? text
      : {
          name,
          reason: `must be a calendar date YYYY-MM-DD (1970 or later), got ${JSON.stringify(text.slice(0, 40))}`,
        };

/** This endpoint's order of parameter errors: unknown parameters (in query order), then `to`, then `from`. */
const ERROR_ORDER: Readonly<Record<string, number>> = { to: 1, from: 2 };

/**
 * Validate `from` / `to` with the one query parser (defaults: the last 30 days up to today, UTC);
 * a bad value is a 400 naming the parameter. The range rules (`from` not after `to`, at most
 * MAX_USAGE_DAYS) are this endpoint's own and checked once both days are valid.
 */
export function parseUsageQuery(query: RawQuery, today: string): { from: string; to: string } {
  const q = parseQuery(USAGE_QUERY_SCHEMA, query, { parsers: { from: day('from'), to: day('to') } });
  const errors = q.errors.sort((a, b) => (ERROR_ORDER[a.name] ?? 0) - (ERROR_ORDER[b.name] ?? 0));
  if (errors.length) throw invalidParams(errors);
  const to = (q.values['to'] as string | undefined) ?? today;
  const from = (q.values['from'] as string | undefined) ?? daysBefore(to, DEFAULT_USAGE_DAYS - 1);
  if (from > to) errors.push({ name: 'from', reason: `must not be after to (${to})` });
  else if ((Date.parse(to) - Date.parse(from)) / 86_400_000 + 1 > MAX_USAGE_DAYS)
    errors.push({ name: 'from', reason: `the range may cover at most ${MAX_USAGE_DAYS} days` });
  if (errors.length) throw invalidParams(errors);
  return { from, to };
}
