import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BM25, foldSearchText, lastQueryWord, stem, STOPWORDS, tokenize } from '../../common/search-text.ts';

test('foldSearchText strips accents and lower-cases, keeping punctuation', () => {
  const cases: [string, string][] = [
    ['Dún Laoghaire', 'dun laoghaire'],
    ['ÓCONNELL St.', 'oconnell st.'],
    ['Café-Bar', 'cafe-bar'],
    ['', ''],
  ];
  for (const [input, expected] of cases) assert.is(foldSearchText(input), expected, input);
});

test('stem maps inflections to one key', () => {
  const cases: [string, string][] = [
    ['extension', 'extens'],
    ['extensions', 'extens'],
    ['roofing', 'roof'],
    ['roofs', 'roof'],
    ['roof', 'roof'],
    ['houses', 'hous'],
    ['house', 'hous'],
    ['housing', 'hous'],
    ['dwellings', 'dwell'],
    ['planned', 'plan'],
    ['permitted', 'permit'],
    ['facilities', 'facil'],
    ['facility', 'facil'],
    ['renovated', 'renovat'],
    ['renovation', 'renovat'],
    ['classes', 'class'],
    ['campus', 'campus'],
    ['shed', 'shed'],
    ['speed', 'speed'],
    ['thing', 'thing'],
    ['bed', 'bed'],
    ['d6w', 'd6w'],
    ['2024', '2024'],
  ];
  for (const [input, expected] of cases) assert.is(stem(input), expected, input);
});

test('tokenize folds, splits, drops stopwords and short tokens, stems', () => {
  const cases: [string, string[]][] = [
    ['Permission for 2 No. extensions to the Dún house', ['extens', 'dun', 'hous']],
    ['Proposed development of existing site works and associated roofing', ['roof']],
    ['Solar PV panels, Co. Cork (Ref 23/1234)', ['solar', 'pv', 'panel', 'cork', 'ref', '23', '1234']],
    ['roof ROOF Roofs', ['roof', 'roof', 'roof']],
    ['', []],
    ['a the of', []],
  ];
  for (const [input, expected] of cases) assert.equal(tokenize(input), expected, input);
});

test('query and document tokenise identically (accents and case fold)', () => {
  assert.equal(tokenize('DÚN LAOGHAIRE'), tokenize('dun laoghaire'));
  assert.equal(tokenize('Extensions'), tokenize('extension'));
});

test('every stopword is lower-case and accent-free, so folded tokens can hit it', () => {
  for (const w of STOPWORDS) assert.is(foldSearchText(w), w);
  assert.ok(STOPWORDS.has('permission') && STOPWORDS.has('the'));
});

test('lastQueryWord keeps stopwords, drops one-character tails', () => {
  const cases: [string, string | null][] = [
    ['roof ext', 'ext'],
    ['the', 'the'],
    ['Dún', 'dun'],
    ['solar p', null],
    ['', null],
    ['roof, ', 'roof'],
  ];
  for (const [input, expected] of cases) assert.is(lastQueryWord(input), expected, input);
});

test('BM25 constants', () => {
  assert.equal(BM25, { k1: 1.2, b: 0.75 });
});

test.run();
