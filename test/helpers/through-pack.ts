/**
 * `tree` as the server receives it: written into a stream and read back (api/engine/pack.ts) —
 * views into the reader's buffers, the sets in the bitset kernel's memory, not the builder's
 * objects. How a test holds an index built in its own process the way the server holds one.
 *
 * @example const parts = (await throughPack(ix.parts())) as LeadIndexParts;
 */
import { PassThrough } from 'node:stream';
import { readPack, writePack, type Packable } from '../../api/engine/pack.ts';

export async function throughPack(tree: Packable): Promise<Packable> {
  const pipe = new PassThrough({ highWaterMark: 1 << 24 });
  const [, got] = await Promise.all([writePack(pipe, tree), readPack(pipe)]);
  return got;
}
