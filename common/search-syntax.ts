/**
 * The syntax of `q` (docs/search.md "Query syntax"), parsed once into a small tree that both the
 * SQL builder (common/search-query.ts) and the API's in-memory index (api/engine/search-index.ts)
 * evaluate, so the two cannot disagree on what a query means:
 *
 *   kitchen extension        every word is required (AND)
 *   "heat pump"              a phrase: these words, in this order, next to each other
 *   solar*                   a prefix: any indexed term starting with it (≥ 3 letters or digits)
 *   solar OR wind            either; OR binds tighter than the implicit AND:
 *   attic OR loft conversion = (attic OR loft) AND conversion
 *
 * Words and phrases go through `tokenize` exactly as documents did (accents and case folded,
 * stopwords dropped, stemmed); a word or phrase left with no terms (only stopwords: "the") is
 * ignored. Results are ranked by BM25 over every term of the query, as before.
 */
import { foldSearchText, stem, tokenize } from './search-text.ts';

/** The least letters or digits before a prefix's `*`. */
export const PREFIX_MIN = 3;

/** One thing a lead must hold. */
export type SearchItem =
  /** A word (or `23/1234`-like run of words): every one of its `terms` is required. */
  | { kind: 'word'; text: string; terms: string[] }
  /**
   * A phrase: every one of its `terms` is required (the index finds candidates by them), and the
   * lead's search text (`searchDocText`), folded, must hold its `words` as consecutive words
   * (`phrasePattern`; no stemming inside quotes, punctuation between words ignored).
   */
  | { kind: 'phrase'; text: string; words: string[]; terms: string[] }
  /** A prefix: some indexed term starts with one of `prefixes` (as typed, and its stem). */
  | { kind: 'prefix'; text: string; prefixes: string[] };

/** A parsed `q`: every group must match (AND); a group matches when any of its items does (OR). */
export interface SearchAst {
  groups: SearchItem[][];
}

/** What `parseSearchQuery` gives: the tree, or why `q` is malformed (the 400's reason). */
export type SearchParse = { ast: SearchAst; error?: undefined } | { error: string; ast?: undefined };

type Token = { op: 'OR' } | { item: SearchItem | null };

/**
 * Parse `q`. `lastWordPrefix` (search as you type, the pipeline's tools): the last bare word also
 * matches as a prefix (from 2 characters, stopwords kept: "the" may start "theatre").
 *
 * @example parseSearchQuery('"heat pump" solar* OR wind')
 *   // { ast: { groups: [[phrase heat pump], [prefix solar, word wind]] } }
 */
export function parseSearchQuery(q: string, opts: { lastWordPrefix?: boolean } = {}): SearchParse {
  const tokens: Token[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '"') {
      const close = q.indexOf('"', i + 1);
      if (close < 0) return { error: 'has an unbalanced quote: close the phrase with "' };
      const text = q.slice(i + 1, close);
      i = close + 1;
      if (q[i] === '*') return { error: `"${text}"* : a phrase cannot be a prefix; put * after a word (solar*)` };
      const words = foldSearchText(text)
        .split(/[^a-z0-9]+/)
        .filter((w) => w !== '');
      if (words.length === 0) return { error: 'has an empty phrase ""' };
      const terms = [...new Set(tokenize(text))];
      tokens.push({ item: terms.length ? { kind: 'phrase', text, words, terms } : null });
      continue;
    }
    let end = i;
    while (end < q.length && !/\s/.test(q[end]!) && q[end] !== '"') end++;
    const text = q.slice(i, end);
    i = end;
    if (text === 'OR') {
      tokens.push({ op: 'OR' });
      continue;
    }
    if (text.includes('*')) {
      const stemText = text.slice(0, -1);
      if (!text.endsWith('*') || stemText.includes('*')) return { error: `${text}: * may only end a word (solar*)` };
      if (stemText === '') return { error: 'has a * without a word before it (solar*)' };
      const folded = foldSearchText(stemText);
      if (!/^[a-z0-9]+$/.test(folded)) return { error: `${text}: a prefix is letters and digits only` };
      if (folded.length < PREFIX_MIN)
        return { error: `${text}: a prefix needs at least ${PREFIX_MIN} letters or digits before *` };
      tokens.push({ item: prefixItem(text, folded, PREFIX_MIN) });
      continue;
    }
    const terms = [...new Set(tokenize(text))];
    tokens.push({ item: { kind: 'word', text, terms } });
  }
  const groups: (SearchItem | null)[][] = [];
  let joinNext = false;
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]!;
    if ('op' in tok) {
      if (t === 0 || t === tokens.length - 1 || 'op' in tokens[t + 1]!)
        return { error: 'has an OR without a word on both sides (solar OR wind)' };
      joinNext = true;
      continue;
    }
    if (joinNext) groups.at(-1)!.push(tok.item);
    else groups.push([tok.item]);
    joinNext = false;
  }
  if (opts.lastWordPrefix) {
    const last = groups.at(-1);
    const item = last?.at(-1);
    if (last && item?.kind === 'word') {
      const folded = foldSearchText(item.text);
      if (/^[a-z0-9]{2,}$/.test(folded)) last[last.length - 1] = prefixItem(item.text, folded, 2);
    }
  }
  const kept = groups
    .map((g) => g.filter((x): x is SearchItem => x !== null && (x.kind !== 'word' || x.terms.length > 0)))
    .filter((g) => g.length > 0);
  return { ast: { groups: kept } };
}

function prefixItem(text: string, folded: string, min: number): SearchItem {
  return { kind: 'prefix', text, prefixes: [...new Set([folded, stem(folded)])].filter((p) => p.length >= min) };
}

/** The exact terms of a query (words' and phrases'), de-duplicated, in query order: what BM25 scores besides the prefixes' terms. */
export function exactTerms(ast: SearchAst): string[] {
  const out = new Set<string>();
  for (const g of ast.groups) for (const it of g) if (it.kind !== 'prefix') for (const t of it.terms) out.add(t);
  return [...out];
}

/** The prefixes of a query, de-duplicated, in query order. */
export function queryPrefixes(ast: SearchAst): string[] {
  const out = new Set<string>();
  for (const g of ast.groups) for (const it of g) if (it.kind === 'prefix') for (const p of it.prefixes) out.add(p);
  return [...out];
}

/** Whether the query has a phrase (its check needs the leads' text). */
export const hasPhrase = (ast: SearchAst): boolean => ast.groups.some((g) => g.some((it) => it.kind === 'phrase'));

/** The leads columns a lead's search text is made of, in order (pipeline/stages/write-tables.ts builds the documents so). */
export const SEARCH_TEXT_COLUMNS = ['description', 'address', 'planning_authority', 'application_number'] as const;

/** A lead's search text from its `SEARCH_TEXT_COLUMNS` values: the non-null ones joined by a space (SQL `concat_ws(' ', …)`). */
export function searchDocText(values: readonly (string | null | undefined)[]): string {
  return values.filter((v): v is string => v !== null && v !== undefined).join(' ');
}

/**
 * A phrase's pattern over the folded search text (`foldSearchText`): its words as whole words,
 * one after the other, anything but letters and digits between them. The same text for
 * JavaScript's RegExp and DuckDB's RE2 (`regexp_matches`).
 *
 * @example phrasePattern(['heat', 'pump']) // '(^|[^a-z0-9])heat[^a-z0-9]+pump([^a-z0-9]|$)'
 */
export function phrasePattern(words: readonly string[]): string {
  return `(^|[^a-z0-9])${words.join('[^a-z0-9]+')}([^a-z0-9]|$)`;
}
