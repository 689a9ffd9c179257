/**
 * The one query parser (api/query/parse-query.ts): shaping by the schema's types, the one wording
 * per kind of mistake, `$ref`s to another query schema, typed post-parsers — on a small schema of
 * this test and on the real ones of schemas/.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  derefProp,
  noQuerySchema,
  NUMBER_TEXT,
  parseQuery,
  querySchema,
  schemaVariant,
} from '../../../api/query/parse-query.ts';
import { REASONS } from '../../../api/query/query-common.ts';

const SCHEMA = {
  $id: 'https://schemas.leads.ie/v1/test-parse-query.schema.json',
  type: 'object',
  properties: {
    kind: { type: 'string', enum: ['a', 'b'] },
    tags: { type: 'array', items: { type: 'string', enum: ['x', 'y', 'z'] }, minItems: 1, maxItems: 2 },
    n: { type: 'integer', minimum: 1 },
    size: { type: 'integer', minimum: 1, maximum: 50 },
    price: { type: 'number', minimum: 0 },
    top: { type: 'number', maximum: 9 },
    flag: { type: 'boolean' },
    day: { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    code: { type: 'string', pattern: '^[A-Z]{3}$' },
    round: { type: 'string', pattern: '^R[0-9]$', 'x-pattern-reason': 'must be R and a digit' },
    text: { type: 'string', minLength: 1, maxLength: 5 },
    ref: { $ref: 'leads-query.schema.json#/properties/scale' },
  },
  required: ['kind'],
  additionalProperties: false,
};
const parse = (raw: Record<string, string | string[]>, opts = {}) => parseQuery(SCHEMA, { kind: 'a', ...raw }, opts);
const reason = (raw: Record<string, string | string[]>): string | undefined => parse(raw).errors[0]?.reason;

test('shaping: comma lists (repeats joined, items trimmed, empties dropped), numbers, booleans, text', () => {
  const q = parse({ tags: ['x, y', ''], n: '3', price: '-0.5', flag: 'TRUE', day: '2025-02-28', ref: 'major,minor' });
  assert.equal(q.shaped, {
    kind: 'a',
    tags: ['x', 'y'],
    n: 3,
    price: -0.5,
    flag: true,
    day: '2025-02-28',
    ref: ['major', 'minor'],
  });
  assert.equal(q.errors, [{ name: 'price', reason: REASONS.notNegative }]);
  assert.equal(
    q.values,
    { kind: 'a', tags: ['x', 'y'], n: 3, flag: true, day: '2025-02-28', ref: ['major', 'minor'] },
    'only the valid ones',
  );
  for (const f of ['1', 'true', 'True']) assert.is(parse({ flag: f }).values.flag, true);
  for (const f of ['0', 'false', 'FALSE']) assert.is(parse({ flag: f }).values.flag, false);
});

test('NUMBER_TEXT keeps what Ajv would coerce but the API refuses: exponents, signs, spaces, hex', () => {
  for (const t of ['1e3', '+5', ' 12', '0x10', '1.', '.5', '1234567890123456']) {
    assert.not.ok(NUMBER_TEXT.test(t), t);
    assert.is(reason({ price: t }), REASONS.notANumber, t);
  }
  for (const t of ['0', '-3', '12.5', '123456789012345']) assert.ok(NUMBER_TEXT.test(t), t);
});

test('one wording per kind of mistake', () => {
  const cases: [Record<string, string | string[]>, string][] = [
    [{ n: 'x' }, REASONS.notAWholeNumber],
    [{ n: '1.5' }, REASONS.notAWholeNumber],
    [{ n: '0' }, REASONS.atLeast(1)],
    [{ price: 'x' }, REASONS.notANumber],
    [{ price: '-1' }, REASONS.notNegative],
    [{ top: '10' }, REASONS.atMost(9)],
    [{ size: 'x' }, REASONS.wholeNumberFrom(1, 50)],
    [{ size: '0' }, REASONS.wholeNumberFrom(1, 50)],
    [{ size: '51' }, REASONS.wholeNumberFrom(1, 50)],
    [{ flag: 'maybe' }, REASONS.notABoolean],
    [{ day: '2025-02-30' }, REASONS.notADate],
    [{ day: '2025-2-3' }, REASONS.notADate],
    [{ code: 'ab' }, REASONS.pattern('^[A-Z]{3}$')],
    [{ round: 'X1' }, 'must be R and a digit'],
    [{ text: 'toolong' }, REASONS.tooLong(5)],
    [{ tags: 'x,y,z' }, REASONS.tooMany(2)],
    [{ tags: ',' }, REASONS.empty],
    [{ kind: ['a', 'b'] }, REASONS.repeated],
  ];
  for (const [raw, want] of cases) assert.is(reason(raw), want, JSON.stringify(raw));
  assert.equal(parse({ tags: 'x,w' }).errors, [{ name: 'tags', reason: REASONS.notAllowed, allowed: ['x', 'y', 'z'] }]);
  assert.equal(
    parse({ ref: 'huge' }).errors,
    [{ name: 'ref', reason: REASONS.notAllowed, allowed: ['minor', 'medium', 'large', 'major'] }],
    'through a $ref',
  );
  assert.equal(parseQuery(SCHEMA, {}).errors, [{ name: 'kind', reason: REASONS.required, allowed: ['a', 'b'] }]);
});

test('unknown parameters: named, with the accepted ones when asked; one error per parameter, shaping errors first', () => {
  assert.equal(parse({ bogus: '1' }).errors, [{ name: 'bogus', reason: REASONS.unknownParameter }]);
  for (const name of ['constructor', 'toString', '__proto__'])
    assert.equal(parse({ [name]: '1' }).errors, [{ name, reason: REASONS.unknownParameter }], name);
  assert.equal(parse({ bogus: '1' }, { listAllowed: true }).errors[0]!.allowed, Object.keys(SCHEMA.properties));
  const q = parse({ n: '0', bogus: ['1', '2'], code: ['A', 'B'], flag: 'x' });
  assert.equal(
    q.errors.map((e) => e.name),
    ['bogus', 'code', 'n', 'flag'],
  );
  assert.equal([...q.bad].sort(), ['bogus', 'code', 'flag', 'n']);
});

test('typed post-parsers have the last word on their parameter; mapItems maps list items before validation', () => {
  const parsers = { code: (t: string) => (t === 'abc' ? { name: 'code', reason: 'no abc' } : t.toUpperCase()) };
  assert.equal(
    parse({ code: 'xyz1' }, { parsers }).values.code,
    'XYZ1',
    'the schema pattern does not refuse what the parser reads',
  );
  assert.equal(parse({ code: 'abc' }, { parsers }).errors, [{ name: 'code', reason: 'no abc' }]);
  assert.equal(parse({ tags: 'X,Y' }, { mapItems: { tags: (s: string) => s.toLowerCase() } }).values.tags, ['x', 'y']);
});

test('the schemas of schemas/: $refs followed, variants with their own id', () => {
  const exp = querySchema('export-query.schema.json');
  assert.equal(derefProp(exp.properties.min_units), querySchema('leads-query.schema.json').properties.min_units);
  const v = schemaVariant(exp, 'file', (n) => n !== 'limit');
  assert.is(v.$id, 'https://schemas.leads.ie/v1/export-query-file.schema.json');
  assert.not.ok('limit' in v.properties);
  assert.ok('limit' in exp.properties, 'the file itself is not changed');
  assert.equal(parseQuery(exp, { min_units: '-2', limit: '0' }).errors, [
    { name: 'min_units', reason: REASONS.notNegative },
    { name: 'limit', reason: REASONS.wholeNumberFrom(1, 10000) },
  ]);
});

test('an endpoint that takes no parameters: each one given is unknown, once, in query order', () => {
  assert.equal(parseQuery(noQuerySchema(), {}), { values: {}, shaped: {}, errors: [], bad: new Set() });
  const q = parseQuery(noQuerySchema(), { b: ['1', '3'], a: '2', constructor: 'x' });
  assert.equal(q.errors, [
    { name: 'b', reason: REASONS.unknownParameter },
    { name: 'a', reason: REASONS.unknownParameter },
    { name: 'constructor', reason: REASONS.unknownParameter },
  ]);
  assert.equal(q.values, {});
});

test.run();
