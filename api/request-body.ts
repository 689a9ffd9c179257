/**
 * The one reader of request bodies (JSON APIs, the licence claim, the account area's forms): the
 * body as text, refused with the caller's own 413 as soon as it passes its limit, so a large
 * body is never held whole.
 */

/** The body of `req` as UTF-8 text; throws `tooLarge()` once more than `maxBytes` have arrived. */
export async function readBodyText(req: AsyncIterable<Buffer>, maxBytes: number, tooLarge: () => Error): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > maxBytes) throw tooLarge();
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString('utf8');
}
