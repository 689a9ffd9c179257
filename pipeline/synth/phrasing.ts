/**
 * How a planning register writes a development down: the kind of application (retention of works
 * already carried out, extension of duration, amendments, section 5 declarations, besides new
 * works and outline permissions), each council's house style, Dublin City's prefix codes
 * (`RETENTION -`, `EXTENSION OF DURATION-`, `EXPP:`, `SHEC:`, `PROTECTED STRUCTURE -`), the clerk's
 * typos and texts cut short. Applied to a template's development (descriptions.ts); the
 * ApplicationType and `kind` are kept consistent with the text.
 *
 * Shares follow what 1,362 real Dublin City descriptions of 2009–2011 show (about 7 % start
 * `RETENTION`, 14 % `PROTECTED STRUCTURE`, 6 % `EXPP`, 3 % `SHEC`, under 1 % extensions of
 * duration, 1.5 % amendments, 3 % start lower case, most cut at about 80 characters); no real
 * text is copied.
 */
import type { Development, UseClassKey } from './descriptions.ts';
import type { Rng } from './rng.ts';

/** A council's house style: `register` terse text with prefix codes (Dublin City), `permission` "Permission for …", `consist` "The development will consist of …". */
export type Phrasing = 'register' | 'permission' | 'consist';

/** The house style of an authority's register. */
export function phrasingOf(authority: string): Phrasing {
  if (authority === 'Dublin City') return 'register';
  let h = 0;
  for (let i = 0; i < authority.length; i++) h = (h * 31 + authority.charCodeAt(i)) >>> 0;
  return h % 10 < 3 ? 'consist' : 'permission';
}

/** Share of applications of a use class that are for the retention of works already carried out (besides the extension templates' own). */
const RETENTION_SHARE: Partial<Record<UseClassKey, number>> = {
  signage: 0.35,
  telecom: 0.3,
  shopfront: 0.2,
  landscaping: 0.22,
  agricultural: 0.18,
  change_of_use: 0.12,
  windows: 0.12,
  heat_pump: 0.1,
  solar: 0.05,
  commercial: 0.06,
  industrial: 0.05,
  community: 0.08,
  one_off: 0.03,
  roofing: 0.12,
  ev_charger: 0.05,
  insulation: 0.05,
};
/** Classes whose permissions get their duration extended or are amended (works of some size). */
const LASTING: ReadonlySet<UseClassKey> = new Set([
  'one_off',
  'housing',
  'apartments',
  'lrd',
  'commercial',
  'industrial',
  'hotel',
  'extension',
  'school',
  'healthcare',
  'data_centre',
  'agricultural',
]);

/** Small works a householder or a shop asks to have declared exempt (section 5). */
const DECLARABLE: ReadonlySet<UseClassKey> = new Set([
  'extension',
  'landscaping',
  'signage',
  'solar',
  'windows',
  'change_of_use',
  'heat_pump',
  'ev_charger',
  'insulation',
  'roofing',
  'shopfront',
  'telecom',
]);

const SEPARATORS = [' - ', ': ', '-', ' ', ':', ' : '];

/** The works a template's text describes, without its leading "Permission for" / "Retention permission for" / "Outline permission for". */
function worksOf(d: string): string {
  return d.replace(/^(?:Retention permission for|Outline permission for|Permission (?:for|to)) (?:the )?/, '');
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const low = (s: string): string => (/^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s);

/** "construct a dwelling" → "construction of a dwelling": the works as a noun phrase, for "to provide for …", "Retention of …". */
function nounPhrase(w: string): string {
  return w
    .replace(/^demolish /, 'demolition of ')
    .replace(/ and construct /, ' and construction of ')
    .replace(/^construct /, 'construction of ')
    .replace(/^replace /, 'replacement of ');
}

/** "construction of a slatted shed …" → "slatted shed …" (what is retained). */
function retainedWorks(w: string): string {
  return nounPhrase(w)
    .replace(/^(?:construction|erection|installation|provision) of (?:an? )?/i, '')
    .replace(/^(?:an? |new )/, '');
}

/** A reference to an earlier permission of the same council. */
function earlierRef(r: Rng, received: number): string {
  const yy = String((received - r.int(3, 6)) % 100).padStart(2, '0');
  return r.pick([
    `Reg. Ref. ${r.int(1000, 6999)}/${yy}`,
    `Reg. Ref. ${yy}/${r.int(100, 999)}`,
    `planning ref. ${yy}${r.int(100, 9999)}`,
  ]);
}

/** Words that say what kind of application it is: never misspelt, so the kind stays readable. */
const KIND_WORDS = /^(?:retention|duration|amendments|outline|permission|declaration|section)$/i;

/**
 * Misspell one longer lower-case word: a letter dropped, doubled or two swapped (as real
 * registers do: "demoltion", "vehiculaar"). Prefix codes and the words naming the kind are spared.
 */
export function misspell(r: Rng, s: string): string {
  const words = [...s.matchAll(/\b[a-z]{6,}\b/g)].filter((m) => !KIND_WORDS.test(m[0]));
  if (!words.length) return s;
  const m = r.pick(words);
  const w = m[0];
  const i = r.int(1, w.length - 2);
  const bad = r.pick([
    w.slice(0, i) + w.slice(i + 1),
    w.slice(0, i) + w[i] + w.slice(i),
    w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2),
  ]);
  return s.slice(0, m.index) + bad + s.slice(m.index! + w.length);
}

/**
 * The development as the authority's register writes it: draws the kind of application (for a
 * template that did not set one), writes the text in the authority's style with its prefixes,
 * and adds the register's noise. `year` is the year the application is received.
 */
export function phraseDevelopment(dev: Development, c: { r: Rng; authority: string; year: number }): Development {
  const r = c.r;
  const style = phrasingOf(c.authority);
  let kind = dev.kind;
  let appType = dev.appType;
  if (appType === 'OUTLINE PERMISSION') kind = 'outline';
  else if (appType === 'RETENTION') kind = 'retention';
  let works = worksOf(dev.description);
  if (kind === 'new_works' && appType === 'PERMISSION') {
    const x = r.next();
    if (x < (RETENTION_SHARE[dev.cls] ?? 0)) {
      kind = 'retention';
      appType = 'RETENTION';
      works = retainedWorks(works);
    } else if (style === 'register' && DECLARABLE.has(dev.cls) && r.chance(0.1)) {
      kind = 'declaration';
      appType = 'SECTION 5 DECLARATION';
    } else if (LASTING.has(dev.cls) && r.chance(0.012)) {
      kind = 'extension_of_duration';
      appType = 'EXTENSION OF DURATION';
    } else if (LASTING.has(dev.cls) && r.chance(0.016)) {
      kind = 'amendment';
    }
  }
  const protectedStructure = r.chance(style === 'register' ? 0.14 : 0.03) && !/protected structure/i.test(works);
  const shec = style === 'register' && dev.units === 1 && kind === 'new_works' && r.chance(0.4);
  const sep = r.pick(SEPARATORS);
  let d: string;
  if (style === 'register') {
    let w = cap(works);
    if (r.chance(0.5)) w = w.replace(/ and /g, ' & ');
    const pre: string[] = [];
    if (protectedStructure)
      pre.push(r.chance(0.96) ? 'PROTECTED STRUCTURE' : r.pick(['PROTECTED STRUTURE', 'PRO STRUCT']));
    if (kind === 'retention') pre.push('RETENTION');
    if (kind === 'extension_of_duration')
      pre.push(r.pick(['EXTENSION OF DURATION', 'EXTENSION OF DURATION', 'EXT OF DURATION']));
    if (kind === 'declaration') pre.push('EXPP');
    if (shec) pre.push('SHEC');
    if (appType === 'PERMISSION AND RETENTION') pre.push('Permission/Retention');
    if (kind === 'amendment') w = `Amendments to previously approved ${earlierRef(r, c.year)}: ${low(w)}`;
    if (kind === 'declaration' && r.chance(0.2)) w = `Section 5 ${r.pick(['for', 'request for', 'Req for'])} ${low(w)}`;
    if (kind === 'outline') w = `Outline permission for ${low(w)}`;
    d = pre.length ? `${pre.join(sep)}${sep}${w}` : w;
    if (r.chance(0.03)) d = low(d);
  } else {
    // "Permission to replace …" has no noun to "consist of": it keeps its own wording
    const lead = (s: string): string =>
      style === 'consist' && !/^Permission to /.test(dev.description)
        ? `The development will consist of ${low(s)}`
        : dev.description;
    switch (kind) {
      case 'retention':
        d =
          dev.appType === 'RETENTION' && style === 'permission'
            ? dev.description
            : `${r.pick(['Retention of', 'Retention permission for', 'Permission for retention of'])} ${r.chance(0.4) && !/^(?:\d|existing|replacement|alterations|widening|removal|demolition|site works)/i.test(works) ? 'existing ' : ''}${low(works)}`;
        break;
      case 'extension_of_duration':
        d = `Extension of duration of permission ${earlierRef(r, c.year)} for ${low(nounPhrase(works))}`;
        break;
      case 'amendment':
        d = `${style === 'consist' ? 'The development will consist of amendments' : 'Permission for amendments'} to development permitted under ${earlierRef(r, c.year)} to provide for ${low(nounPhrase(works))}`;
        break;
      case 'outline':
        d = dev.description;
        break;
      default:
        d = style === 'consist' && appType === 'PERMISSION' ? lead(works) : dev.description;
    }
    if (protectedStructure)
      d += r.pick([', a Protected Structure', ' at this Protected Structure', ' (Protected Structure)']);
  }
  // the clerk's noise: a misspelt word, a text cut short (most of Dublin City's, as listed)
  if (r.chance(0.03)) d = misspell(r, d);
  const cutShare = style === 'register' ? 0.6 : 0.03;
  if (r.chance(cutShare)) {
    const at = style === 'register' ? r.int(62, 80) : r.int(90, 160);
    if (d.length > at) d = d.slice(0, at).trimEnd();
  }
  return { ...dev, description: d, appType, kind };
}
