/**
 * Search text normalisation shared by the pipeline (which builds the release's inverted index,
 * pipeline/release/search-index.ts) and the API (which tokenises `q` the same way before it
 * looks terms up). Pure and dependency-free: nothing here may import from `pipeline/` or `api/`.
 *
 * A query only finds what the index holds if both sides run exactly these functions, so any
 * change here changes the index format: rebuild the release and bump its version. The rules
 * are described in docs/search.md.
 */

/** BM25 parameters used when scoring (k1: term-frequency saturation, b: length normalisation). */
export const BM25 = { k1: 1.2, b: 0.75 } as const;

/**
 * English stopwords plus the boilerplate that nearly every planning description carries
 * ("permission is sought for development at the site…"), which would otherwise match most
 * documents and only add noise. Compared against the folded token before stemming.
 */
export const STOPWORDS: ReadonlySet<string> = new Set([
  // english
  'a',
  'about',
  'above',
  'after',
  'again',
  'against',
  'all',
  'also',
  'am',
  'an',
  'and',
  'any',
  'are',
  'as',
  'at',
  'be',
  'been',
  'being',
  'below',
  'between',
  'both',
  'but',
  'by',
  'can',
  'could',
  'did',
  'do',
  'does',
  'each',
  'etc',
  'few',
  'for',
  'from',
  'further',
  'had',
  'has',
  'have',
  'having',
  'he',
  'her',
  'here',
  'his',
  'how',
  'if',
  'in',
  'into',
  'is',
  'it',
  'its',
  'may',
  'more',
  'most',
  'no',
  'nor',
  'not',
  'of',
  'off',
  'on',
  'once',
  'only',
  'or',
  'other',
  'our',
  'out',
  'over',
  'own',
  'same',
  'shall',
  'she',
  'should',
  'so',
  'some',
  'such',
  'than',
  'that',
  'the',
  'their',
  'them',
  'then',
  'there',
  'these',
  'they',
  'this',
  'those',
  'through',
  'to',
  'too',
  'under',
  'until',
  'up',
  'upon',
  'very',
  'via',
  'was',
  'we',
  'were',
  'what',
  'when',
  'where',
  'which',
  'while',
  'who',
  'whom',
  'why',
  'will',
  'with',
  'within',
  'would',
  'you',
  'your',
  // planning boilerplate
  'permission',
  'planning',
  'development',
  'developments',
  'proposed',
  'propose',
  'proposes',
  'existing',
  'site',
  'sites',
  'works',
  'associated',
  'ancillary',
  'including',
  'include',
  'includes',
  'together',
  'comprising',
  'comprises',
  'consisting',
  'consists',
  'provision',
  'sought',
  'seek',
  'seeks',
  'seeking',
  'application',
  'relevant',
  'related',
  'necessary',
  'thereof',
  'therein',
  'herein',
  'located',
  'co',
]);

/** Lower-case and strip accents: "Dún Laoghaire" → "dun laoghaire". Punctuation is kept. */
export function foldSearchText(s: string): string {
  // Plain ASCII (most text) has nothing to decompose.
  if (!NON_ASCII.test(s)) return s.toLowerCase();
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}

const NON_ASCII = /[^\x00-\x7f]/;

const VOWEL = /[aeiouy]/;
const LETTERS_ONLY = /^[a-z]+$/;

/**
 * A light English stemmer (Porter step 1 plus a few common suffixes) for folded, lower-case
 * words. It only needs to map a word and its inflections to the same key, not to a real word:
 * houses/housing → hous, roofs/roofing → roof, extension(s) → extens, renovated → renovat.
 * Words of three letters or fewer and tokens holding digits ("d6w", "2024") are unchanged.
 *
 * @example stem('extensions') // 'extens'
 */
export function stem(word: string): string {
  if (word.length <= 3 || !LETTERS_ONLY.test(word)) return word;
  let w = word;
  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  // Step 1b: -ing / -ed, when what is left still has a vowel ("shed", "thing" stay).
  for (const suffix of ['ing', 'ed']) {
    if (!w.endsWith(suffix)) continue;
    if (suffix === 'ed' && w.endsWith('eed')) break; // feed, speed, need stay
    const base = w.slice(0, -suffix.length);
    if (base.length >= 3 && VOWEL.test(base)) {
      w = base;
      // running → runn → run; but dwelling → dwell (l, s, z stay doubled).
      if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
    }
    break;
  }
  // Common derivational suffixes, when at least four letters remain.
  for (const suffix of ['ions', 'ion', 'ments', 'ment', 'ness', 'ity']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 4) {
      w = w.slice(0, -suffix.length);
      break;
    }
  }
  // Final e: house → hous, so that it meets houses / housing.
  if (w.endsWith('e') && w.length > 3) w = w.slice(0, -1);
  return w;
}

/**
 * The words of a text as index terms: fold accents and case, split on anything that is not
 * a-z or 0-9, drop stopwords and one-character tokens, stem. Duplicates are kept (they are the
 * term frequency). Used verbatim for documents and for queries.
 *
 * @example tokenize('Permission for 2 No. extensions to the Dún house') // ['extens', 'dun', 'hous']
 */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  const folded = foldSearchText(text);
  const len = folded.length;
  let i = 0;
  while (i < len) {
    while (i < len && !isWordChar(folded.charCodeAt(i))) i++;
    const start = i;
    while (i < len && isWordChar(folded.charCodeAt(i))) i++;
    if (i - start < 2) continue;
    const raw = folded.slice(start, i);
    if (STOPWORDS.has(raw)) continue;
    let stemmed = stemCache.get(raw);
    if (stemmed === undefined) {
      if (stemCache.size >= STEM_CACHE_MAX) stemCache.clear();
      stemmed = stem(raw);
      stemCache.set(raw, stemmed);
    }
    out.push(stemmed);
  }
  return out;
}

/** a-z or 0-9: the characters of a token. */
function isWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
}

/** Memo of `stem` (a pure function) for tokenize: vocabularies are small, corpora are not. */
const stemCache = new Map<string, string>();
const STEM_CACHE_MAX = 100_000;

/**
 * The last word of a query as typed, folded, for prefix ("search as you type") matching, or
 * null when it is shorter than two characters. Unlike `tokenize` it keeps stopwords: "the"
 * may be the start of "theatre".
 */
export function lastQueryWord(text: string): string | null {
  const words = foldSearchText(text)
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
  const last = words.at(-1);
  return last !== undefined && last.length >= 2 ? last : null;
}
