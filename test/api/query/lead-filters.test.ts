/**
 * The lead filter table (api/query/lead-filters.ts): the checked-in query schema is what the table
 * generates, every filter reads a column of the lead schema of the right type, and the SQL
 * clauses of each kind in both dialects.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import {
  datePairs,
  FILTERS,
  filterClauses,
  leadsQueryJsonSchema,
  type LeadsFilters,
} from '../../../api/query/lead-filters.ts';
import { generatedQuerySchemas } from '../../../api/query/write-query-schemas.ts';

const read = (path: string): string => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

test('the checked-in query schemas are the generated ones (regenerate: node --import tsx api/query/write-query-schemas.ts)', () => {
  for (const [path, text] of Object.entries(generatedQuerySchemas())) assert.is(read(path), text, path);
});

test('every filter: a unique name, a schema property, a column of schemas/lead.schema.json of its kind', () => {
  const lead = JSON.parse(read('schemas/lead.schema.json')) as {
    properties: Record<string, { type: string | string[]; format?: string }>;
  };
  const schema = leadsQueryJsonSchema() as { properties: Record<string, unknown> };
  assert.is(new Set(FILTERS.map((f) => f.name)).size, FILTERS.length);
  for (const f of FILTERS) {
    assert.ok(schema.properties[f.name], `${f.name} in the query schema`);
    const col = lead.properties[f.column];
    assert.ok(col, `${f.name}: column ${f.column} in lead.schema.json`);
    const types = ([] as string[]).concat(col!.type);
    const want = {
      text: 'string',
      enum: f.kind === 'enum' && f.listColumn ? 'array' : 'string',
      multi: 'string',
      range: f.kind === 'range' ? f.type : '',
      flag: 'boolean',
      date: 'string',
      key: 'string',
      geometry: 'number',
    }[f.kind];
    if (f.kind === 'geometry')
      assert.ok(
        ([] as string[]).concat(lead.properties[f.lonColumn]!.type).includes('number'),
        `${f.name}: ${f.lonColumn} is a number`,
      );
    assert.ok(
      types.includes(want) || (want === 'number' && types.includes('integer')),
      `${f.name}: ${f.column} is ${types.join('|')}, ${f.kind} wants ${want}`,
    );
    if (f.kind === 'date') assert.is(col!.format, 'date', `${f.name}: ${f.column} is a date`);
  }
  for (const [from, to] of datePairs()) assert.is(from.column, to.column);
});

test('filterClauses: every kind, DuckDB and PostgreSQL, in table order', () => {
  const f: LeadsFilters = {
    scale: ['major'],
    vertical: ['solar', 'roofing'],
    county: ['Cork'],
    min_units: 2,
    demolition: false,
    q: 'roof',
  };
  assert.equal(filterClauses(f), {
    clauses: [
      '(list_contains(l.verticals, ?) OR list_contains(l.verticals, ?))',
      'l.county IN (?)',
      'l.scale IN (?)',
      'l.num_units >= ?',
      'l.demolition = ?',
    ],
    params: ['solar', 'roofing', 'Cork', 'major', 2, false],
  });
  assert.equal(filterClauses(f, 'postgres', 3), {
    clauses: [
      'l.verticals && $3::text[]',
      'l.county = ANY($4::text[])',
      'l.scale = ANY($5::text[])',
      'l.num_units >= $6',
      'l.demolition = $7',
    ],
    params: [['solar', 'roofing'], ['Cork'], ['major'], 2, false],
  });
  assert.equal(filterClauses({}), { clauses: [], params: [] });
});

test.run();
