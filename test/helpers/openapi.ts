/**
 * Validate a response body against the OpenAPI document the API serves, so every HTTP test can
 * check that what it got is what the document promises.
 *
 * @example
 *   const doc = buildOpenApi(api.config);            // or (await api.request('/v1/openapi.json')).body
 *   const res = await api.request('/v1/infrastructure?vertical=wind');
 *   assert.equal(validateResponse(doc, 'get', '/infrastructure', res.status, res.body), []);
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

type Json = Record<string, any>;

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

const DOC_ID = 'https://openapi.test/openapi.json';
const compiled = new WeakMap<object, { ajv: Ajv2020; fns: Map<string, ValidateFunction> }>();

const escapePointer = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Errors of `body` against the response `status` of `method pathTemplate` in `doc` (paths as in
 * the document, relative to the /v1 server: `/leads/{id}`). `[]` when valid. A status the
 * document does not list for the operation, or a body on a response without content, is an error.
 */
export function validateResponse(
  doc: Json,
  method: string,
  pathTemplate: string,
  status: number,
  body: unknown,
  mediaType?: string,
): string[] {
  const op = doc.paths?.[pathTemplate]?.[method.toLowerCase()];
  if (!op) return [`${method.toUpperCase()} ${pathTemplate} is not in the OpenAPI document`];
  const response = op.responses?.[String(status)] ?? op.responses?.default;
  if (!response) return [`status ${status} is not documented for ${method.toUpperCase()} ${pathTemplate}`];
  const content = response.content as Record<string, { schema: Json }> | undefined;
  if (!content)
    return body === null || body === undefined || body === ''
      ? []
      : [`status ${status} of ${pathTemplate} has no body in the document`];
  // The media type the response says it is, when the operation lists several (e.g. a file or its JSON quote).
  const listed = mediaType !== undefined ? Object.keys(content).find((t) => t === mediaType) : undefined;
  const type =
    status >= 400 && content['application/problem+json']
      ? 'application/problem+json'
      : (listed ?? Object.keys(content)[0]!);
  if (!/^application\/([a-z.+-]+\+)?json$/.test(type))
    return typeof body === 'string' || body === null ? [] : [`status ${status} of ${pathTemplate} should not be JSON`];
  let entry = compiled.get(doc);
  if (!entry) {
    // price_eur is `multipleOf: 0.01`: floating-point division needs a tolerance (as pipeline/validate.ts)
    const ajv = new Ajv2020({ strict: false, allErrors: true, allowUnionTypes: true, multipleOfPrecision: 6 });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: DOC_ID });
    entry = { ajv, fns: new Map() };
    compiled.set(doc, entry);
  }
  const pointer = [
    'paths',
    pathTemplate,
    method.toLowerCase(),
    'responses',
    response === op.responses[String(status)] ? String(status) : 'default',
    'content',
    type,
    'schema',
  ]
    .map(escapePointer)
    .join('/');
  let fn = entry.fns.get(pointer);
  if (!fn) {
    fn = entry.ajv.compile({ $ref: `${DOC_ID}#/${pointer}` });
    entry.fns.set(pointer, fn);
  }
  if (fn(body)) return [];
  return (fn.errors ?? []).map(
    (e) =>
      `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.keyword === 'additionalProperties' ? ` '${(e.params as { additionalProperty: string }).additionalProperty}'` : ''}`,
  );
}
