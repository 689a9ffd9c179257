/** Export builders and parameters: SQL and params, CSV/JSON rendering on real rows, parse errors. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDb } from '../../../api/duckdb/db.ts';
import { csvStream } from '../../../api/render/csv.ts';
import { text } from 'node:stream/consumers';
import { ApiError } from '../../../api/http/errors.ts';
import { placeNames } from '../../../api/query/leads-params.ts';
import {
  csvHeader,
  exportHash,
  exportRowsQuery,
  jsonLineSql,
  LEAD_COLUMN_KINDS,
  parseExportQuery,
} from '../../../api/query/export-query.ts';
import { encodeCursor } from '../../../api/query/paging.ts';
import { ExportTempSpace } from '../../../api/exports/temp-space.ts';
import { tempDir } from '../../helpers/tmp.ts';

const src = { leads: 'leads', search: null };
const config = {
  pageSizeDefault: 25,
  pageSizeMax: 100,
  pageMax: 100,
  cursorSecret: 'export-query-test-secret-0123456789abcdef',
  cursorSecretsPrevious: [],
};
const places = placeNames([{ planning_authority: 'Cork City', county: 'Cork' }]);

test('rows query: filters, keyset on id, limit; whole set without limit', () => {
  assert.equal(
    exportRowsQuery(src, { filters: { county: ['Cork'], min_units: 2 }, afterId: 120, limit: 1001 }, 'l.id'),
    {
      sql: 'SELECT l.id FROM leads AS l\nWHERE l.county IN (?) AND l.num_units >= ? AND l.id > ?\nORDER BY l.id\nLIMIT ?',
      params: ['Cork', 2, 120, 1001],
    },
  );
  assert.equal(exportRowsQuery(src, { filters: {}, afterId: null, limit: null }, 'l.id'), {
    sql: 'SELECT l.id FROM leads AS l\nWHERE TRUE\nORDER BY l.id',
    params: [],
  });
  assert.equal(
    exportRowsQuery(src, { filters: { county: ['Cork'] }, afterId: null, limit: null, ordered: false }, 'l.id'),
    { sql: 'SELECT l.id FROM leads AS l\nWHERE l.county IN (?)', params: ['Cork'] },
    'files: no sort',
  );
});

test('column kinds come from the lead schema', () => {
  assert.is(LEAD_COLUMN_KINDS['verticals'], 'list');
  assert.is(LEAD_COLUMN_KINDS['received_date'], 'date');
  assert.is(LEAD_COLUMN_KINDS['est_value'], 'number');
  assert.is(LEAD_COLUMN_KINDS['demolition'], 'boolean');
  assert.is(LEAD_COLUMN_KINDS['address'], 'text');
  assert.ok(csvHeader().startsWith('id,lead_key,'));
});

test('CSV (DuckDB CSV writer) and JSON rendering on a real row: quoting, NULLs, lists, masking, header, CRLF', async () => {
  const db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '64MB' });
  try {
    const cols = Object.keys(LEAD_COLUMN_KINDS)
      .map((c) => {
        const v: Record<string, string> = {
          id: '7',
          address: `'1 "Main" St, Cork'`,
          description: `'line one' || chr(10) || 'line two'`,
          verticals: `['solar', 'roofing']`,
          received_date: `DATE '2025-03-04'`,
          est_value: '250000',
          demolition: 'true',
          applicant_org: `'Acme Ltd'`,
          lat: '53.5',
        };
        const kind = LEAD_COLUMN_KINDS[c];
        const nul =
          kind === 'list'
            ? 'NULL::VARCHAR[]'
            : kind === 'date'
              ? 'NULL::DATE'
              : kind === 'number'
                ? 'NULL::DOUBLE'
                : kind === 'boolean'
                  ? 'NULL::BOOLEAN'
                  : 'NULL::VARCHAR';
        return `${v[c] ?? nul} AS "${c}"`;
      })
      .join(', ');
    const from = `(SELECT ${cols}) AS l`;
    const [row] = await db.all<{ json: string; mjson: string }>(
      `SELECT ${jsonLineSql(new Set())} AS json, ${jsonLineSql(new Set(['applicant_org']))} AS mjson FROM ${from}`,
    );
    const source = { leads: `(SELECT ${cols})`, search: null };
    const req = { filters: {}, afterId: null, limit: null };
    const temp = new ExportTempSpace({ root: tempDir('export-query-'), maxBytes: 1e9, waitMs: 0 });
    const [head, csv, end] = (await text(csvStream(db, source, req, new Set(), await temp.acquire('csv', 1)))).split(
      '\r\n',
    );
    assert.is(head, csvHeader(), 'our header, unquoted');
    assert.is(end, '', 'CRLF after the last line');
    const masked = (
      await text(csvStream(db, source, req, new Set(['applicant_org']), await temp.acquire('csv', 1)))
    ).split('\r\n')[1]!;
    const fields = csv!.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((f) => f.replace(/,$/, ''));
    const at = (name: string): string => fields[Object.keys(LEAD_COLUMN_KINDS).indexOf(name)]!;
    assert.is(at('address'), '"1 ""Main"" St, Cork"');
    assert.is(at('description'), '"line one\nline two"');
    assert.is(at('verticals'), '"solar;roofing"');
    assert.is(at('received_date'), '2025-03-04');
    assert.is(at('demolition'), 'true');
    assert.is(at('decision'), '', 'NULL is an empty field');
    assert.is(at('applicant_org'), '"Acme Ltd"');
    assert.ok(masked.includes(',,') && !masked.includes('Acme'), 'masked column blank');
    assert.is(masked.split(',').length, csv!.split(',').length, 'masked column kept');
    const json = JSON.parse(row!.json);
    assert.equal(Object.keys(json), Object.keys(LEAD_COLUMN_KINDS));
    assert.equal(
      [json.id, json.verticals, json.received_date, json.applicant_org, json.decision],
      [7, ['solar', 'roofing'], '2025-03-04', 'Acme Ltd', null],
    );
    assert.is(JSON.parse(row!.mjson).applicant_org, null);
  } finally {
    db.close();
  }
});

test('parameters: the leads filters, limit and cursor for pages only; one 400 naming each bad one', () => {
  const r = parseExportQuery({ county: 'cork', limit: '50' }, 'page', config, places);
  assert.equal(r, { filters: { county: ['Cork'] }, limit: 50, cursor: null });
  const c = encodeCursor([99], 'R0', exportHash({ county: ['Cork'] }), config);
  assert.equal(parseExportQuery({ county: 'Cork', cursor: c }, 'page', config, places).cursor, {
    afterId: 99,
    release: 'R0',
  });
  const err = (raw: Record<string, string>, mode: 'page' | 'file'): ApiError => {
    try {
      parseExportQuery(raw, mode, config, places);
    } catch (e) {
      return e as ApiError;
    }
    throw new Error('no error');
  };
  assert.equal(
    err({ limit: '0', page: '1', county: 'Atlantis' }, 'page')
      .errors!.map((e) => e.name)
      .sort(),
    ['county', 'limit', 'page'],
  );
  assert.equal(err({ limit: '10' }, 'file').errors, [{ name: 'limit', reason: 'unknown parameter' }]);
  // dry_run never reaches the parser: the access model takes it off the query (test/api/access)
  assert.equal(err({ dry_run: '1' }, 'file').errors, [{ name: 'dry_run', reason: 'unknown parameter' }]);
  assert.is(err({ county: 'Kerry', cursor: c }, 'page').status, 400);
});

test.run();
