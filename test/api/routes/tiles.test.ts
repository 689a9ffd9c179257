/**
 * GET /v1/tiles/{layer}.json and /v1/tiles/{layer}/{z}/{x}/{y}.mvt on the tiny release: tiles
 * decoded with @mapbox/vector-tile (MapLibre's own decoder) hold exactly the feed's features in
 * the tile (checked against the GeoJSON feed), clusters add up to the points they stand for,
 * every scope allowed gets the same bytes, ETags, 204 for empty tiles, 400 for bad z/x/y.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { VectorTile } from '@mapbox/vector-tile';
import Pbf from 'pbf';
import { assertProblem, startTestApi, type TestApi } from '../../helpers/api.ts';
import { CLUSTER_MAX_ZOOM, tileFields, TILE_BUFFER, TILE_EXTENT } from '../../../api/gis/tiles.ts';
import { enrichedFields } from '../../../api/access/masking.ts';

let api: TestApi;
type F = { id: number; geometry: { coordinates: [number, number] }; properties: Record<string, any> };
let feed: F[] = [];

test.before(async () => {
  api = await startTestApi();
  const res = await api.request('/v1/feeds/leads.geojson?page_size=10000', { key: api.keys.ent_feed });
  feed = res.body.features as F[];
});
test.after(async () => {
  await api?.close();
});

/** Tile x/y of a point at zoom z, and its position inside the tile in extent units. */
function tileOf(lon: number, lat: number, z: number): { x: number; y: number; px: number; py: number } {
  const n = 2 ** z;
  const fx = ((lon + 180) / 360) * n;
  const s = Math.sin((lat * Math.PI) / 180);
  const fy = (0.5 - (0.25 * Math.log((1 + s) / (1 - s))) / Math.PI) * n;
  const x = Math.floor(fx);
  const y = Math.floor(fy);
  return { x, y, px: (fx - x) * TILE_EXTENT, py: (fy - y) * TILE_EXTENT };
}

async function getTile(
  path: string,
  key = api.keys.ent_feed,
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${api.baseUrl}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

function decode(
  bytes: Buffer,
  layer = 'leads',
): { id: number | undefined; props: Record<string, any>; x: number; y: number }[] {
  const vt = new VectorTile(new Pbf(bytes));
  const l = vt.layers[layer]!;
  assert.ok(l, `layer ${layer} in the tile`);
  assert.is(l.extent, TILE_EXTENT);
  const out = [];
  for (let i = 0; i < l.length; i++) {
    const f = l.feature(i);
    assert.is(f.type, 1, 'points');
    const [[p]] = f.loadGeometry() as unknown as [[{ x: number; y: number }]];
    out.push({ id: f.id, props: f.properties as Record<string, any>, x: p!.x, y: p!.y });
  }
  return out;
}

test('a zoom-14 tile holds exactly the feed features inside it (and its buffer), with the declared fields', async () => {
  const z = 14;
  const f0 = feed[0]!;
  const { x, y } = tileOf(...f0.geometry.coordinates, z);
  const res = await getTile(`/v1/tiles/leads/${z}/${x}/${y}.mvt`);
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/vnd.mapbox-vector-tile');
  assert.match(res.headers.get('etag') ?? '', /^W\/"/);
  const got = decode(res.bytes);
  const b = TILE_BUFFER;
  const expected = feed.filter((f) => {
    const t = tileOf(...f.geometry.coordinates, z);
    const px = (t.x - x) * TILE_EXTENT + t.px;
    const py = (t.y - y) * TILE_EXTENT + t.py;
    return px >= -b && px <= TILE_EXTENT + b && py >= -b && py <= TILE_EXTENT + b;
  });
  assert.ok(expected.length >= 1);
  assert.equal(
    got.map((g) => g.id).sort((p, q) => p! - q!),
    expected.map((f) => f.id).sort((p, q) => p - q),
  );
  const fields = tileFields('leads').map((f) => f.name);
  for (const g of got) {
    const f = expected.find((e) => e.id === g.id)!;
    assert.is(g.props['cluster'], false);
    assert.is(g.props['point_count'], 1);
    for (const k of fields) {
      const want = k === 'verticals' ? (f.properties[k] as string[]).join(',') : f.properties[k];
      if (want === null || want === '') assert.not.ok(k in g.props, `${k} absent when null`);
      else assert.is(g.props[k], want, `${g.id} ${k}`);
    }
    for (const k of Object.keys(g.props))
      assert.ok(['cluster', 'point_count', ...fields].includes(k), `unexpected field ${k}`);
    const t = tileOf(...f.geometry.coordinates, z);
    assert.ok(
      Math.abs((t.x - x) * TILE_EXTENT + t.px - g.x) <= 1 && Math.abs((t.y - y) * TILE_EXTENT + t.py - g.y) <= 1,
      'position',
    );
  }
});

test('low zooms are clustered and the clusters add up to every feature', async () => {
  const z = 5;
  const tiles = new Set(
    feed.map((f) => {
      const t = tileOf(...f.geometry.coordinates, z);
      return `${t.x}/${t.y}`;
    }),
  );
  let total = 0;
  let clusters = 0;
  for (const xy of tiles) {
    const res = await getTile(`/v1/tiles/leads/${z}/${xy}.mvt`);
    assert.is(res.status, 200);
    const [tx, ty] = xy.split('/').map(Number) as [number, number];
    for (const g of decode(res.bytes)) {
      // count each feature once: in the tile that holds it, not in a neighbour's buffer
      if (g.x < 0 || g.y < 0 || g.x >= TILE_EXTENT || g.y >= TILE_EXTENT) continue;
      total += g.props['point_count'];
      if (g.props['cluster']) (clusters++, assert.is(g.id, undefined, 'clusters have no id'));
      assert.ok(tx >= 0 && ty >= 0);
    }
  }
  assert.ok(clusters > 0, 'clustered');
  assert.is(total, feed.length);
  assert.ok(CLUSTER_MAX_ZOOM < 14);
});

test('tile fields are never enriched; every scope allowed gets the same bytes; others are refused', async () => {
  for (const layer of ['leads', 'infrastructure'] as const) {
    const enriched = enrichedFields(layer === 'leads' ? 'lead' : 'infrastructure-project');
    for (const f of tileFields(layer)) assert.not.ok(enriched.includes(f.name), f.name);
  }
  const { x, y } = tileOf(...feed[0]!.geometry.coordinates, 10);
  const path = `/v1/tiles/leads/10/${x}/${y}.mvt`;
  const a = await getTile(path, api.keys.ent_feed);
  const c = await getTile(path, api.keys.custom);
  assert.is(a.status, 200);
  assert.ok(a.bytes.equals(c.bytes));
  assertProblem(await api.request(path, { key: api.keys.ent_api }), 403, 'insufficient_scope');
  assertProblem(await api.request(path, { key: null }), 401, 'missing_key');
});

test('ETag / 304, 204 for an empty tile, 400 for bad z/x/y, 404 for an unknown layer', async () => {
  const { x, y } = tileOf(...feed[0]!.geometry.coordinates, 8);
  const first = await getTile(`/v1/tiles/leads/8/${x}/${y}.mvt`);
  const again = await fetch(`${api.baseUrl}/v1/tiles/leads/8/${x}/${y}.mvt`, {
    headers: { Authorization: `Bearer ${api.keys.ent_feed}`, 'If-None-Match': first.headers.get('etag')! },
  });
  assert.is(again.status, 304);
  const empty = await getTile('/v1/tiles/leads/6/0/0.mvt'); // the Arctic Pacific
  assert.is(empty.status, 204);
  assert.is(empty.bytes.length, 0);
  for (const [path, name] of [
    ['/v1/tiles/leads/17/0/0.mvt', 'z'],
    ['/v1/tiles/leads/3/8/0.mvt', 'x'],
    ['/v1/tiles/leads/3/0/-1.mvt', 'y'],
    ['/v1/tiles/leads/a/0/0.mvt', 'z'],
  ] as const) {
    const res = await api.request(path, { key: api.keys.ent_feed });
    assertProblem(res, 400, 'invalid_parameter');
    assert.is(res.body.errors[0].name, name, path);
  }
  assertProblem(
    await api.request('/v1/tiles/leads/3/0/0.mvt?foo=1', { key: api.keys.ent_feed }),
    400,
    'unknown_parameter',
  );
  assertProblem(await api.request('/v1/tiles/roads/3/0/0.mvt', { key: api.keys.ent_feed }), 404, 'not_found');
  assertProblem(await api.request('/v1/tiles/roads.json', { key: api.keys.ent_feed }), 404, 'not_found');
});

test('TileJSON 3.0.0 per layer, tiles URL carrying an access_token on', async () => {
  for (const layer of ['leads', 'infrastructure']) {
    const res = await api.request(`/v1/tiles/${layer}.json`, { key: api.keys.ent_feed });
    assert.is(res.status, 200);
    const tj = res.body;
    assert.is(tj.tilejson, '3.0.0');
    assert.equal(tj.tiles, [`${api.baseUrl}/v1/tiles/${layer}/{z}/{x}/{y}.mvt`]);
    assert.is(tj.vector_layers[0].id, layer);
    assert.is(tj.maxzoom, 16);
    assert.ok(tj.bounds[0] < tj.bounds[2] && tj.bounds[1] < tj.bounds[3]);
    assert.is(tj.version, api.release());
  }
  const token = (await api.request('/v1/feeds/token', { key: api.keys.ent_feed })).body.access_token as string;
  const res = await api.request(`/v1/tiles/leads.json?access_token=${token}`, { key: null });
  assert.is(res.status, 200);
  assert.is(res.body.tiles[0], `${api.baseUrl}/v1/tiles/leads/{z}/{x}/{y}.mvt?access_token=${token}`);
  const { x, y } = tileOf(...feed[0]!.geometry.coordinates, 12);
  const tile = await fetch(res.body.tiles[0].replace('{z}', '12').replace('{x}', String(x)).replace('{y}', String(y)));
  assert.is(tile.status, 200, 'the template works as given');
});

test.run();
