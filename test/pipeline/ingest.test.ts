import { rejects } from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ingestFiles } from '../../pipeline/ingest.ts';
import { readCompanies } from '../../pipeline/sources/companies.ts';
import { CRO_COMPANY_COLUMNS, CRO_FILING_COLUMNS, GRID_CONNECTION_COLUMNS } from '../../pipeline/sources/formats.ts';
import type { SourceName } from '../../pipeline/sources/formats.ts';

const fixture = (p: string): string => fileURLToPath(new URL(`../fixtures/${p}`, import.meta.url));

const CASES: [SourceName, string[], { rows: number; lines: number; reasons: Record<string, number> }][] = [
  [
    'planning',
    [fixture('planning/planning.csv')],
    {
      rows: 5,
      lines: 16,
      reasons: {
        duplicate: 2,
        unknown_authority: 1,
        missing_field: 2,
        invalid_date: 2,
        invalid_number: 2,
        invalid_coordinates: 1,
        malformed_row: 1,
      },
    },
  ],
  [
    'planning',
    [fixture('planning/planning.csv'), fixture('planning/planning.json'), fixture('planning/bad-header.csv')],
    {
      rows: 7,
      lines: 16 + 4 + 1,
      reasons: {
        duplicate: 2,
        unknown_authority: 1,
        missing_field: 3,
        invalid_date: 2,
        invalid_number: 2,
        invalid_coordinates: 1,
        malformed_row: 2,
        unknown_header: 1,
      },
    },
  ],
  [
    'commencements',
    [fixture('commencements/commencements.csv')],
    {
      rows: 3,
      lines: 10,
      reasons: {
        duplicate: 1,
        missing_field: 1,
        invalid_date: 1,
        invalid_number: 1,
        invalid_coordinates: 2,
        malformed_row: 1,
      },
    },
  ],
  [
    'ppr',
    [fixture('ppr/current.csv'), fixture('ppr/old.csv')],
    {
      rows: 8,
      lines: 16,
      reasons: {
        duplicate: 1,
        invalid_date: 1,
        invalid_number: 1,
        missing_field: 3,
        unknown_county: 1,
        malformed_row: 1,
      },
    },
  ],
];

test('ingestFiles: reports rows, rejects by reason and lines for each fixture', async () => {
  for (const [source, files, want] of CASES) {
    const { report, result } = await ingestFiles(source, files);
    const label = `${source} ${files.length} file(s)`;
    assert.equal(
      report,
      {
        source,
        rows: want.rows,
        rejects: report.lines - want.rows,
        reasons: want.reasons,
        lines: want.lines,
        files,
      },
      label,
    );
    assert.is(report.rows + report.rejects, report.lines, label);
    assert.is(result.rows.length, report.rows, label);
    assert.is(result.rejects.length, report.rejects, label);
  }
});

test('ingestFiles: companies concatenates company and filing results', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-cro-'));
  try {
    const companies = join(dir, 'companies.csv');
    const blank = (over: Record<string, string>, cols: readonly string[]): string =>
      cols.map((c) => over[c] ?? '').join(',');
    writeFileSync(
      companies,
      [
        CRO_COMPANY_COLUMNS.join(','),
        blank(
          {
            company_num: '100001',
            company_name: 'Fakebuild Construction Limited',
            company_status: 'Normal ',
            company_reg_date: '2001-05-04',
          },
          CRO_COMPANY_COLUMNS,
        ),
        blank(
          {
            company_num: '100002',
            company_name: 'Otherfake Homes DAC',
            company_status: 'Normal',
            company_reg_date: '2010-01-01',
          },
          CRO_COMPANY_COLUMNS,
        ),
        '',
      ].join('\n'),
    );
    const filings = join(dir, 'filings.csv');
    writeFileSync(
      filings,
      [
        CRO_FILING_COLUMNS.join(','),
        blank(
          { company_num: '100001', document_number: 'D1', filing_type: 'B1', received_date: '2023-01-05' },
          CRO_FILING_COLUMNS,
        ),
        '',
      ].join('\n'),
    );
    const files = [companies, filings];
    const direct = await readCompanies(files);
    const { report, result } = await ingestFiles('companies', files);
    assert.is(report.rows, direct.companies.rows.length + direct.filings.rows.length);
    assert.is(report.rejects, direct.companies.rejects.length + direct.filings.rejects.length);
    assert.is(report.lines, direct.companies.lines + direct.filings.lines);
    assert.is(report.lines, 3);
    assert.is(report.rows + report.rejects, report.lines);
    assert.is(result.rows.length, report.rows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ingestFiles: infrastructure goes through its adapter and accounts for every line', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ingest-infra-'));
  try {
    const file = join(dir, 'grid.csv');
    writeFileSync(
      file,
      [
        GRID_CONNECTION_COLUMNS.join(','),
        'Fakehill Wind Farm,42.5,2019-06-01,North West,ROI,54.1,-8.2,110,Donegal,Wind',
        'too,few',
        '',
      ].join('\n'),
    );
    const { report } = await ingestFiles('infrastructure', [file]);
    assert.is(report.source, 'infrastructure');
    assert.is(report.lines, 2);
    assert.is(report.rows + report.rejects, report.lines);
    assert.is(report.reasons.malformed_row, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ingestFiles: a missing file is an error, not an empty report', async () => {
  await rejects(() => ingestFiles('ppr', [fixture('ppr/does-not-exist.csv')]), /ENOENT/);
});

test.run();
