/** The index of a pre-rendered layer file: ids, byte ranges and coordinates of every line. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rejects } from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildLayerIndex,
  inBBox,
  mergeLayerIndexes,
  positionAfter,
  positionOf,
  readFeatures,
  readFeaturesJoined,
} from '../../../api/gis/layer-index.ts';
import { tempDir } from '../../helpers/tmp.ts';

const dir = tempDir('leads-layer-index-');
const line = (id: number, lon: number, lat: number, extra = ''): string =>
  `{"type":"Feature","id":${id},"geometry":{"type":"Point","coordinates":[${lon},${lat}]},"properties":{"id":${id},"name":"é ${extra}"}}`;

test('indexes every line and reads any of them back, runs in one read', async () => {
  const lines = [
    line(2, -6.1, 53.3),
    line(5, -8.5, 51.9, 'x'.repeat(5000)),
    line(9, -9.05, 53.27),
    line(12, -6.2, 53.35),
  ];
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

test('a layer made of several files: merged by id, lines read back in id order', async () => {
  const a = [line(1, -6.1, 53.3), line(4, -6.2, 53.4, 'a'), line(5, -6.3, 53.5), line(9, -6.4, 53.6)];
  const b = [line(2, -8.5, 51.9, 'b'.repeat(3000)), line(3, -8.4, 51.8), line(7, -8.3, 51.7)];
  writeFileSync(join(dir, 'pa.ndjson'), a.join('\n') + '\n');
  writeFileSync(join(dir, 'pb.ndjson'), b.join('\n') + '\n');
  const ix = mergeLayerIndexes([
    await buildLayerIndex(join(dir, 'pa.ndjson')),
    await buildLayerIndex(join(dir, 'pb.ndjson')),
  ]);
  const byId = [a[0], b[0], b[1], a[1], a[2], b[2], a[3]];
  assert.equal([...ix.ids], [1, 2, 3, 4, 5, 7, 9]);
  assert.equal([...ix.fileOf], [0, 1, 1, 0, 0, 1, 0]);
  assert.equal([...ix.lon], [-6.1, -8.5, -8.4, -6.2, -6.3, -8.3, -6.4]);
  assert.equal(await readFeatures(ix, [0, 1, 2, 3, 4, 5, 6]), byId);
  assert.equal(await readFeatures(ix, [1, 4, 6]), [byId[1], byId[4], byId[6]]);
  assert.is((await readFeaturesJoined(ix, [0, 1, 2, 3, 4, 5, 6])).toString(), byId.join(','));
  assert.is((await readFeaturesJoined(ix, [2, 3, 5])).toString(), [byId[2], byId[3], byId[5]].join(','));
  assert.is(positionOf(ix, 7), 5);
  assert.is(mergeLayerIndexes([]).ids.length, 0);
  assert.throws(() => mergeLayerIndexes([ix, ix]), /in two layer files/);
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
