/**
 * The register's phrasing of generated applications (pipeline/synth/phrasing.ts): the kind of
 * application, its ApplicationType and its text agree; Dublin City writes its prefix codes; the
 * shares of the kinds are those documented in docs/generator.md.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildCompanies } from '../../../pipeline/synth/companies.ts';
import { buildApp, NumberAllocator, type PlanningApp } from '../../../pipeline/synth/planning.ts';
import { misspell, phrasingOf } from '../../../pipeline/synth/phrasing.ts';
import { recordRng } from '../../../pipeline/synth/rng.ts';

const companies = buildCompanies(5, 0.005);
const ctx = { seed: 5, companies, numbers: new NumberAllocator() };
const apps: PlanningApp[] = [];
for (let slot = 0; slot < 12_000; slot++) apps.push(buildApp(ctx, slot, 20_000));
const text = (a: PlanningApp): string => a.dev.description;

const TYPE_OF_KIND: Record<string, RegExp> = {
  retention: /^RETENTION$/,
  extension_of_duration: /^EXTENSION OF DURATION$/,
  outline: /^OUTLINE PERMISSION$/,
  declaration: /^SECTION 5 DECLARATION$/,
  amendment: /^PERMISSION$/,
  new_works: /^(?:PERMISSION|PERMISSION AND RETENTION|LARGE-SCALE RESIDENTIAL DEVELOPMENT)$/,
};
const TEXT_OF_KIND: Record<string, RegExp> = {
  retention: /\bRETENTION\b|\bRetention\b|\bretention of\b/,
  extension_of_duration: /\bEXTENSION OF DURATION\b|\bEXT OF DURATION\b|^Extension of duration\b/,
  outline: /\bOutline permission\b/,
  declaration: /\bEXPP\b/,
  amendment: /\b[Aa]mendments\b/,
};

test('every kind of application has its ApplicationType and says so in its text', () => {
  for (const a of apps) {
    assert.ok(TYPE_OF_KIND[a.dev.kind]!.test(a.dev.appType), `${a.dev.kind} with ${a.dev.appType}: ${text(a)}`);
    const re = TEXT_OF_KIND[a.dev.kind];
    if (re) assert.ok(re.test(text(a)), `${a.dev.kind}: ${text(a)}`);
  }
});

test('the mix of kinds: retention ~10 %, outline ~2 %, extension of duration and amendments under 2 %, declarations only in Dublin City', () => {
  const share = (k: string): number => apps.filter((a) => a.dev.kind === k).length / apps.length;
  assert.ok(share('retention') > 0.07 && share('retention') < 0.14, `retention ${share('retention')}`);
  assert.ok(share('outline') > 0.01 && share('outline') < 0.04, `outline ${share('outline')}`);
  assert.ok(
    share('extension_of_duration') > 0.002 && share('extension_of_duration') < 0.02,
    `EoD ${share('extension_of_duration')}`,
  );
  assert.ok(share('amendment') > 0.002 && share('amendment') < 0.02, `amendment ${share('amendment')}`);
  assert.ok(apps.filter((a) => a.dev.kind === 'declaration').every((a) => a.authority.name === 'Dublin City'));
});

test('Dublin City writes its register style: prefix codes, no "Permission for", most texts cut at 80 characters', () => {
  const dcc = apps.filter((a) => a.authority.name === 'Dublin City').map(text);
  assert.ok(dcc.length > 400, `${dcc.length} Dublin City applications`);
  const coded =
    dcc.filter((d) =>
      /^\s*(?:PROTECTED STRU|PRO STRUCT|RETENTION|EXPP|SHEC|EXTENSION OF DURATION|EXT OF DURATION|Permission\/Retention)/.test(
        d,
      ),
    ).length / dcc.length;
  assert.ok(coded > 0.2 && coded < 0.45, `coded ${coded}`);
  assert.is(dcc.filter((d) => /^\s*Permission for/.test(d)).length, 0);
  const short = dcc.filter((d) => d.trim().length <= 80).length / dcc.length;
  assert.ok(short > 0.6, `short ${short}`);
  const others = apps.filter((a) => a.authority.name !== 'Dublin City').map(text);
  assert.ok(others.filter((d) => d.trim().length <= 80).length / others.length < 0.2);
});

test('phrasingOf: Dublin City is the register; other councils "permission" or "consist"', () => {
  assert.is(phrasingOf('Dublin City'), 'register');
  const styles = new Set(
    ['Cork County', 'Kerry', 'Mayo', 'Fingal', 'Meath', 'Clare', 'Wexford', 'Sligo'].map(phrasingOf),
  );
  assert.equal([...styles].sort(), ['consist', 'permission']);
});

test('misspell: one lower-case word of six letters or more changes, kind words and codes are spared', () => {
  const r = recordRng(1, 'misspell-test', 0);
  for (let i = 0; i < 200; i++) {
    const s = 'RETENTION - Retention of existing vehicular entrance and boundary walls';
    const m = misspell(r, s);
    assert.is.not(m, s);
    assert.ok(m.startsWith('RETENTION - Retention of '), m);
  }
  assert.is(misspell(r, 'RETENTION of shed'), 'RETENTION of shed');
});

test.run();
