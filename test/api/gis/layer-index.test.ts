/** The index of a pre-rendered layer file: ids, byte ranges and coordinates of every line. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildLayerIndex, inBBox, positionAfter, positionOf, readFeatures, readFeaturesJoined } from '../../../api/gis/layer-index.ts';
import { tempDir } from '../../helpers/tmp.ts';

const dir = tempDir('leads-layer-index-');
const line = (id: number, lon: number, lat: number, extra = ''): string =>
  `{"type":"Feature","id":${id},"geometry":{"type":"Point","coordinates":[${lon},${lat}]},"properties":{"id":${id},"name":"é ${extra}"}}`;

test('indexes every line and reads any of them back, runs in one read', async () => {
  const lines = [line(2, -6.1, 53.3), line(5, -8.5, 51.9, 'x'.repeat(5000)), line(9, -9.05, 53.27), line(12, -6.2, 53.35)];
  const file = join(dir, 'a.ndjson');
  writeFileSync(file, lines.join('\n') + '\n');
  const ix = await buildLayerIndex(file);
  assert.equal([...ix.ids], [2, 5, 9, 12]);
  assert.equal([...ix.lon], [-6.1, -8.5, -9.05, -6.2]);
  assert.equal(await readFeatures(ix, [0, 1, 2, 3]), lines);
  assert.equal(await readFeatures(ix, [1, 3]), [lines[1], lines[3]]);
  assert.is((await readFeaturesJoined(ix, [0, 1, 2, 3])).toString(), lines.join(','));
  assert.is((await readFeaturesJoined(ix, [0, 2, 3])).toString(), [lines[0], lines[2], lines[3]].join(','));
  assert.is((await readFeaturesJoined(ix, [])).length, 0);
  assert.is(positionAfter(ix, 0), 0);
  assert.is(positionAfter(ix, 5), 2);
  assert.is(positionAfter(ix, 12), 4);
  assert.is(positionOf(ix, 9), 2);
  assert.is(positionOf(ix, 10), -1);
});

test('rejects files that are not pre-rendered point features in id order', async () => {
  const bad = join(dir, 'b.ndjson');
  writeFileSync(bad, line(3, 0, 0) + '\n' + line(2, 0, 0) + '\n');
  await rejects(() => buildLayerIndex(bad), /not ascending/);
  writeFileSync(bad, '{"type":"Feature","id":1,"geometry":null,"properties":{}}\n');
  await rejects(() => buildLayerIndex(bad), /not a pre-rendered Point feature/);
});

test('bbox: edges included, antimeridian crossing', () => {
  assert.ok(inBBox([-7, 53, -6, 54], -6, 54));
  assert.not.ok(inBBox([-7, 53, -6, 54], -5.9, 53.5));
  assert.ok(inBBox([170, -50, -170, -40], 175, -45));
  assert.ok(inBBox([170, -50, -170, -40], -175, -45));
  assert.not.ok(inBBox([170, -50, -170, -40], 0, -45));
});

test.run();
