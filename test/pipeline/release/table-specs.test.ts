/** Table layouts: columns from the schema, every sort column a real column, row groups as declared. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REGISTRY_SPEC, TABLE_LAYOUTS, tableSpec, type TableName } from '../../../pipeline/release/table-specs.ts';
import { columnsFromSchema } from '../../../pipeline/release/tables.ts';

const sortColumns = (orderBy: string): string[] =>
  orderBy.split(',').map((c) =>
    c
      .trim()
      .replace(/\s+(ASC|DESC)$/i, '')
      .replace(/^"(.*)"$/, '$1'),
  );

for (const name of Object.keys(TABLE_LAYOUTS) as TableName[]) {
  test(`${name}: columns of schema ${TABLE_LAYOUTS[name].schema}, sorted by columns it has`, () => {
    const spec = tableSpec(name);
    assert.is(spec.name, name);
    assert.equal(spec.columns, columnsFromSchema(TABLE_LAYOUTS[name].schema));
    const cols = new Set(spec.columns.map(([c]) => c));
    for (const c of sortColumns(spec.orderBy)) assert.ok(cols.has(c), `${name} sorts by ${c}, not a column`);
  });
}

test("row groups: the layout's, 100,000 by default, or the override (leads: LEADS_ROW_GROUP_ROWS)", () => {
  assert.is(tableSpec('sales').rowGroupRows, 50_000);
  assert.is(tableSpec('companies').rowGroupRows, 100_000);
  assert.is(tableSpec('leads', 20_000).rowGroupRows, 20_000);
});

test('registry: sorted by columns it has', () => {
  const cols = new Set(REGISTRY_SPEC.columns.map(([c]) => c));
  for (const c of sortColumns(REGISTRY_SPEC.orderBy)) assert.ok(cols.has(c), c);
});

test.run();
