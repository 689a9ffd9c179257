/**
 * Generated leads lie on land inside their own planning authority: every lead of the tiny
 * release (the project's generator and pipeline) is checked against the committed land cells
 * (common/authority-land.json) always, and against the real county polygons of
 * ../shared/realdata/boundaries_cartodb_admin_counties/ when they are on this machine (today's
 * authorities from the pre-2014 polygons: Limerick, Waterford and Tipperary merged; Dublin's four
 * councils anywhere within County Dublin; Cork City anywhere within Cork).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import booleanPointInPolygon from '@turf/boolean-point-in-polygon';
import { openDb } from '../../../pipeline/lib/duckdb.ts';
import { AUTHORITIES } from '../../../pipeline/reference/authorities.ts';
import {
  authorityLand,
  authorityOfBoundary,
  cellCorner,
  LAND_GRID,
  onAuthorityLand,
} from '../../../pipeline/reference/land.ts';
import { pointNear, misplaced } from '../../../pipeline/synth/vocab.ts';
import { recordRng } from '../../../pipeline/synth/rng.ts';
import { tinyRelease } from '../../helpers/api.ts';
import { testIf } from '../../helpers/skip.ts';
import { REPO_ROOT } from '../../helpers/tmp.ts';

const BOUNDARIES = join(
  REPO_ROOT,
  '..',
  'shared',
  'realdata',
  'boundaries_cartodb_admin_counties',
  'ireland_counties.geojson',
);
const withBoundaries = testIf(
  test,
  existsSync(BOUNDARIES) ? null : `${BOUNDARIES} is missing (the real county polygons are not on this machine)`,
);

type Lead = { id: number; planning_authority: string; lat: number; lon: number };
let leads: Lead[] = [];

test.before(async () => {
  const { dir } = await tinyRelease();
  const db = await openDb();
  leads =
    await db.all<Lead>(`SELECT CAST(id AS BIGINT) AS id, planning_authority, CAST(lat AS DOUBLE) AS lat, CAST(lon AS DOUBLE) AS lon
    FROM read_parquet('${join(dir, 'leads.parquet')}') WHERE lat IS NOT NULL AND lon IS NOT NULL ORDER BY id`);
  db.close();
});

/** The real polygons that hold an authority's land: its own merged ones (Dublin's four: County Dublin; Cork City: all of Cork). */
function realLand(): Map<string, GeoJSON.Feature<GeoJSON.MultiPolygon>[]> {
  const fc = JSON.parse(readFileSync(BOUNDARIES, 'utf8')) as GeoJSON.FeatureCollection<
    GeoJSON.MultiPolygon,
    { name: string }
  >;
  const byAuthority = new Map<string, GeoJSON.Feature<GeoJSON.MultiPolygon>[]>();
  for (const f of fc.features) {
    const a = authorityOfBoundary(f.properties.name);
    byAuthority.set(a, [...(byAuthority.get(a) ?? []), f]);
  }
  const dublin = ['Dublin City', 'Dún Laoghaire-Rathdown', 'Fingal', 'South Dublin'].flatMap((a) =>
    byAuthority.get(a)!,
  );
  const out = new Map<string, GeoJSON.Feature<GeoJSON.MultiPolygon>[]>();
  for (const a of AUTHORITIES) {
    if (a.county === 'Dublin') out.set(a.name, dublin);
    else if (a.name === 'Cork City')
      out.set(a.name, [...byAuthority.get('Cork City')!, ...byAuthority.get('Cork County')!]);
    else out.set(a.name, byAuthority.get(a.name)!);
  }
  return out;
}

test('tiny release: leads with coordinates in every authority', () => {
  assert.ok(leads.length > 500, `${leads.length} leads with coordinates`);
  assert.is(new Set(leads.map((l) => l.planning_authority)).size, AUTHORITIES.length);
});

test("tiny release: 0 leads outside their authority's committed land cells", () => {
  const off = leads.filter((l) => !onAuthorityLand(l.planning_authority, l.lat, l.lon));
  assert.equal(
    off.map((l) => `${l.id} ${l.planning_authority} ${l.lat},${l.lon}`),
    [],
  );
});

withBoundaries('tiny release: 0 leads outside the real land of their authority (county polygons)', () => {
  const land = realLand();
  const off = leads.filter(
    (l) => !land.get(l.planning_authority)!.some((f) => booleanPointInPolygon([l.lon, l.lat], f)),
  );
  assert.equal(
    off.map((l) => `${l.id} ${l.planning_authority} ${l.lat},${l.lon}`),
    [],
  );
});

withBoundaries("land cells: corners of sampled cells are inside the authority's own real polygons", () => {
  const fc = JSON.parse(readFileSync(BOUNDARIES, 'utf8')) as GeoJSON.FeatureCollection<
    GeoJSON.MultiPolygon,
    { name: string }
  >;
  const r = recordRng(1, 'land-test', 0);
  let checked = 0;
  for (const [name, cells] of authorityLand().cells) {
    const own = fc.features.filter((f) => authorityOfBoundary(f.properties.name) === name);
    for (let k = 0; k < 40; k++) {
      const c = cellCorner(cells[r.int(0, cells.length - 1)]!);
      for (const [dy, dx] of [
        [0, 0],
        [0, 1],
        [1, 0],
        [1, 1],
      ]) {
        const p = [c.lon + dx! * LAND_GRID.dLon, c.lat + dy! * LAND_GRID.dLat];
        assert.ok(
          own.some((f) => booleanPointInPolygon(p, f)),
          `${name} cell corner ${p} is not inside ${name}`,
        );
        checked++;
      }
    }
  }
  assert.is(checked, AUTHORITIES.length * 160);
});

test('pointNear: Dublin City and Galway City points are on their land (the bays were hit before)', () => {
  for (const name of ['Dublin City', 'Galway City', 'Dún Laoghaire-Rathdown', 'Cork City']) {
    const a = AUTHORITIES.find((x) => x.name === name)!;
    for (let i = 0; i < 2000; i++) {
      const p = pointNear(recordRng(3, 'land-test-point', i), a);
      assert.ok(onAuthorityLand(name, p.lat, p.lon), `${name} ${p.lat},${p.lon}`);
      const q = misplaced(a, p);
      if (q) assert.ok(onAuthorityLand(name, q.lat, q.lon), `${name} misplaced ${q.lat},${q.lon}`);
    }
  }
});

test.run();
