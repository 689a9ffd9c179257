/**
 * Matching organisation names (planning applicants, builders, auction winners, data-centre
 * operators) to companies of the CRO register.
 *
 * Names are compared through `companyNameKey`, a normalised form that ignores case, accents,
 * punctuation, a leading "The", `&` vs "and", the spacing of initials and of Irish `O'` names
 * ("J.P. O'Brien" = "JP OBrien") and the spelling of the legal suffix ("Limited", "Ltd.",
 * "Teoranta" all become `ltd`). `buildCompanyIndex` indexes the register once and answers
 * lookups in three tiers: exact key (confidence 1.0); same key without the legal suffix, also
 * compared without spaces ("Ask.fm" = "Ask FM") (0.9); token-set similarity (Jaccard ≥ 0.8 among
 * companies sharing one of the query's rarest tokens) → the similarity rounded to 2 decimals,
 * capped at 0.89 so that a fuzzy match never ranks with a suffix-only difference.
 */
import { foldText } from '../reference/authorities.ts';
import type { CompanyRow } from '../types.ts';

/** Multi-word legal forms first, so `company limited by guarantee` is not read as `limited`. */
const SUFFIX_PHRASES: readonly [RegExp, string][] = [
  [/\b(company )?(limited|ltd) by guarantee\b/g, 'clg'],
  [/\bcuideachta faoi theorainn rathaiochta\b/g, 'clg'],
  [/\bdesignated activity company\b/g, 'dac'],
  [/\bcuideachta ghniomhaiochta ainmnithe\b/g, 'dac'],
  [/\bpublic (limited|ltd) company\b/g, 'plc'],
  [/\bcuideachta phoibli theoranta\b/g, 'plc'],
  [/\bunlimited company\b/g, 'uc'],
  [/\bunlimited liability company\b/g, 'ulc'],
  [/\blimited liability partnership\b/g, 'llp'],
  [/\blimited partnership\b/g, 'lp'],
  [/\bcuideachta neamhtheoranta\b/g, 'uc'],
  [/\b(limited|ltd|teoranta|teo)\b/g, 'ltd'],
  [/\bcga\b/g, 'dac'],
  [/\bcpt\b/g, 'plc'],
];

/** Legal-form tokens that `companyNameKey` may leave at the end of a key. */
export const LEGAL_SUFFIXES: ReadonlySet<string> = new Set(['ltd', 'dac', 'plc', 'clg', 'uc', 'ulc', 'llp', 'lp']);

/**
 * Normalised key of a company name, used for matching.
 *
 * @example companyNameKey('The Murphy Roofing Co. Limited') // 'murphy roofing co ltd'
 * @example companyNameKey('Ó Cinnéide Uisce & Teas Teoranta') // 'ocinneide uisce and teas ltd'
 * @example companyNameKey('J. P. O Brien Builders') // 'jp obrien builders'
 */
export function companyNameKey(name: string): string {
  let s = name.replace(/&/g, ' and ').replace(/['’`.]/g, '');
  s = foldText(s);
  for (const [re, to] of SUFFIX_PHRASES) s = s.replace(re, to);
  s = s.replace(/^the\s+/, '');
  // "O'Brien", "O Brien" and "OBrien" are one name; so are "J.P.", "J P" and "JP".
  s = s.replace(/\bo (?=[a-z]{2})/g, 'o');
  s = s.replace(/\b[a-z](?: [a-z]\b)+/g, (m) => m.replace(/ /g, ''));
  return s.replace(/\s+/g, ' ').trim();
}

/** The key without its trailing legal-form tokens (`murphy roofing ltd` → `murphy roofing`). */
export function baseOf(key: string): string {
  const t = key.split(' ');
  while (t.length > 1 && LEGAL_SUFFIXES.has(t[t.length - 1]!)) t.pop();
  return t.join(' ');
}

export interface CompanyMatch {
  company_number: string;
  company_name: string;
  confidence: number;
}

export interface CompanyIndex {
  /** Best match over the three tiers (exact key, same key without legal form, token similarity). */
  match(name: string | null): CompanyMatch | null;
  /** The register company whose key equals the name's key exactly, legal form included; else null. */
  registered(name: string): CompanyMatch | null;
  /** The register company with this CRO number (digits only compared); else null. */
  byNumber(companyNumber: string): CompanyMatch | null;
}

/** Minimum token-set (Jaccard) similarity for a fuzzy match. */
const MIN_SIMILARITY = 0.8;
/** A fuzzy match is always below the suffix-only tier. */
const MAX_FUZZY = 0.89;

interface Entry {
  c: CompanyRow;
  tokens: Set<string>;
}

/**
 * Which of two companies with the same key wins: a live one (status Normal) over a dissolved
 * one, then the most recently registered, then the lowest company number. Deterministic
 * whatever the input order.
 */
function better(a: CompanyRow, b: CompanyRow): boolean {
  const la = (a.status ?? '').toLowerCase() === 'normal';
  const lb = (b.status ?? '').toLowerCase() === 'normal';
  if (la !== lb) return la;
  const ra = a.reg_date ?? '';
  const rb = b.reg_date ?? '';
  if (ra !== rb) return ra > rb;
  return compareNumbers(a.company_number, b.company_number) < 0;
}

/** First index of a size-sorted posting list whose entry has at least `size` tokens. */
function lowerBound(list: Entry[], size: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid]!.tokens.size < size) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A CRO number as digits only, without leading zeros (`'012345'` and `'12345'` are one number). */
function digits(n: string): string {
  return n.replace(/\D/g, '').replace(/^0+(?=\d)/, '');
}

function compareNumbers(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}

/** The register indexed for lookups: by key, by key without legal form (also without spaces), by token, by number. */
interface Register {
  byKey: Map<string, CompanyRow>;
  byBase: Map<string, CompanyRow>;
  byCompact: Map<string, CompanyRow>;
  /** Posting lists of the suffix-less keys' tokens, each sorted by token count. */
  byToken: Map<string, Entry[]>;
  byNumber: Map<string, CompanyRow>;
}

/** Keep `c` under `k` unless the company already there is `better`. */
function keepBetter(map: Map<string, CompanyRow>, k: string, c: CompanyRow): void {
  const prev = map.get(k);
  if (!prev || better(c, prev)) map.set(k, c);
}

/** Posting lists of the tokens of each suffix-less key, sorted by token count. */
function tokenPostings(byBase: Map<string, CompanyRow>): Map<string, Entry[]> {
  const byToken = new Map<string, Entry[]>();
  // Token-set similarity depends on the suffix-less key only: one entry per distinct key.
  for (const [base, c] of byBase) {
    const entry: Entry = { c, tokens: new Set(base.split(' ')) };
    for (const t of entry.tokens) {
      const list = byToken.get(t);
      if (list) list.push(entry);
      else byToken.set(t, [entry]);
    }
  }
  for (const list of byToken.values()) list.sort((x, y) => x.tokens.size - y.tokens.size);
  return byToken;
}

/** Index the register's companies by key, suffix-less key, compact key, token and number. */
function indexRegister(companies: CompanyRow[]): Register {
  const byKey = new Map<string, CompanyRow>();
  const byBase = new Map<string, CompanyRow>();
  const byCompact = new Map<string, CompanyRow>();
  const byNumber = new Map<string, CompanyRow>();
  for (const c of companies) {
    byNumber.set(digits(c.company_number), c);
    const key = c.name_key || companyNameKey(c.company_name);
    if (!key) continue;
    keepBetter(byKey, key, c);
    const base = baseOf(key);
    keepBetter(byBase, base, c);
    keepBetter(byCompact, base.replace(/ /g, ''), c);
  }
  return { byKey, byBase, byCompact, byToken: tokenPostings(byBase), byNumber };
}

/** A posting list cut to the entries whose token count can reach the threshold. */
interface Candidates {
  list: Entry[];
  lo: number;
  hi: number;
}

/**
 * The posting lists a fuzzy match of `tokens` must be found in, or null when too many of the
 * query's tokens are unknown for any company to reach the threshold.
 */
function candidateLists(byToken: Map<string, Entry[]>, tokens: Set<string>): Candidates[] | null {
  // A candidate with Jaccard ≥ 0.8 shares at least ceil(0.8·|query|) of the query's tokens, so
  // it misses at most `allowed` of them: it must hold one of the (allowed − absent + 1) rarest
  // query tokens that the register knows (prefix filtering; exact, not a heuristic).
  const allowed = tokens.size - Math.ceil(MIN_SIMILARITY * tokens.size - 1e-9);
  // Only companies with ceil(0.8·n) … floor(n/0.8) tokens can reach the threshold; posting
  // lists are sorted by token count, so each list is cut to that range.
  const minSize = Math.ceil(MIN_SIMILARITY * tokens.size - 1e-9);
  const maxSize = Math.floor(tokens.size / MIN_SIMILARITY + 1e-9);
  const present: Candidates[] = [];
  for (const t of tokens) {
    const list = byToken.get(t);
    if (list) present.push({ list, lo: lowerBound(list, minSize), hi: lowerBound(list, maxSize + 1) });
  }
  const absent = tokens.size - present.length;
  if (absent > allowed || present.length === 0) return null;
  present.sort((x, y) => x.hi - x.lo - (y.hi - y.lo));
  return present.slice(0, allowed - absent + 1);
}

/** Tier 3: the most similar company by token set (Jaccard ≥ 0.8), its confidence capped below tier 2. */
function fuzzyMatch(byToken: Map<string, Entry[]>, base: string): CompanyMatch | null {
  const tokens = new Set(base.split(' '));
  const lists = candidateLists(byToken, tokens);
  if (lists === null) return null;
  const seen = lists.length > 1 ? new Set<Entry>() : null;
  let best: Entry | null = null;
  let bestScore = 0;
  for (const { list, lo, hi } of lists) {
    for (let i = lo; i < hi; i++) {
      const e = list[i]!;
      if (seen) {
        if (seen.has(e)) continue;
        seen.add(e);
      }
      let inter = 0;
      for (const t of tokens) if (e.tokens.has(t)) inter++;
      const score = inter / (tokens.size + e.tokens.size - inter);
      if (score < MIN_SIMILARITY) continue;
      if (best === null || score > bestScore || (score === bestScore && better(e.c, best.c))) {
        best = e;
        bestScore = score;
      }
    }
  }
  if (!best) return null;
  const confidence = Math.min(MAX_FUZZY, Math.round(bestScore * 100) / 100);
  return { company_number: best.c.company_number, company_name: best.c.company_name, confidence };
}

/** A register company as a match of the given confidence. */
function asMatch(c: CompanyRow, confidence: number): CompanyMatch {
  return { company_number: c.company_number, company_name: c.company_name, confidence };
}

/** The best match of a name over the three tiers (uncached). */
function lookupName(reg: Register, name: string): CompanyMatch | null {
  const key = companyNameKey(name);
  if (!key) return null;
  const exact = reg.byKey.get(key);
  if (exact) return asMatch(exact, 1);
  const base = baseOf(key);
  const sameBase = reg.byBase.get(base) ?? reg.byCompact.get(base.replace(/ /g, ''));
  if (sameBase) return asMatch(sameBase, 0.9);
  return fuzzyMatch(reg.byToken, base);
}

/**
 * Index the register for matching. Lookups are cached by the raw name, so repeated names
 * (the same developer on hundreds of applications) cost one map lookup.
 *
 * @example buildCompanyIndex(rows).match('Murphy Roofing Ltd') // { company_number: '123456', …, confidence: 1 }
 */
export function buildCompanyIndex(companies: CompanyRow[]): CompanyIndex {
  const reg = indexRegister(companies);
  const cache = new Map<string, CompanyMatch | null>();
  return {
    registered(name: string): CompanyMatch | null {
      const c = reg.byKey.get(companyNameKey(name));
      return c ? asMatch(c, 1) : null;
    },
    byNumber(companyNumber: string): CompanyMatch | null {
      const c = reg.byNumber.get(digits(companyNumber));
      return c ? asMatch(c, 1) : null;
    },
    match(name: string | null): CompanyMatch | null {
      if (name === null) return null;
      let hit = cache.get(name);
      if (hit === undefined) {
        hit = lookupName(reg, name);
        cache.set(name, hit);
      }
      return hit && { ...hit };
    },
  };
}
