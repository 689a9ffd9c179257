/**
 * Source adapter for the Companies Registration Office (CRO) open data: the company extract
 * (`CRO_COMPANY_COLUMNS`) and the filings history (`CRO_FILING_COLUMNS`). A file's kind is
 * recognised by its header (names matched case-insensitively, in any order). Registered-office
 * addresses are public company data and are kept.
 */
import { parseDate } from '../lib/dates.ts';
import { companyNameKey } from '../normalise/company-match.ts';
import { resolveCounty } from '../reference/authorities.ts';
import type { AdapterResult, CompanyRow, FilingRow, Reject } from '../types.ts';
import { clean, parseInteger, reject, routingKey, scanCsv, type Layout } from './common.ts';
import { CRO_COMPANY_COLUMNS, CRO_FILING_COLUMNS } from './formats.ts';

const COMPANY_LAYOUT: Layout<'company'> = {
  kind: 'company',
  columns: CRO_COMPANY_COLUMNS,
  required: ['company_num', 'company_name', 'company_status', 'company_reg_date'],
};
const FILING_LAYOUT: Layout<'filing'> = {
  kind: 'filing',
  columns: CRO_FILING_COLUMNS,
  required: ['company_num', 'filing_type', 'received_date'],
};

/** Detail of a `duplicate` reject: the row kept instead (`superseded by <file>:<line>`, as other adapters). */
export function keptDetail(keptFile: string, keptLine: number): string {
  return `superseded by ${keptFile}:${keptLine}`;
}

function isReject(x: object): x is Reject {
  return 'reason' in x;
}

/** Parse `company_num`: a required whole number ≥ 1, returned as its canonical decimal text. */
function companyNumber(rec: Record<string, string>, file: string, line: number): string | Reject {
  const raw = clean(rec.company_num);
  const n = parseInteger(raw);
  if (n === null) return reject('companies', file, line, 'missing_field', 'company_num');
  if (n === undefined || n < 1) return reject('companies', file, line, 'invalid_number', 'company_num', raw);
  return String(n);
}

/** Parse the named date columns; the first invalid one becomes an `invalid_date` reject. */
function dates<C extends string>(
  rec: Record<string, string>,
  cols: readonly C[],
  file: string,
  line: number,
  key: string,
): Record<C, string | null> | Reject {
  const out = {} as Record<C, string | null>;
  for (const c of cols) {
    const d = parseDate(rec[c]);
    if (d === undefined) return reject('companies', file, line, 'invalid_date', c, key);
    out[c] = d;
  }
  return out;
}

/** `6202.0` → `6202`; a three-digit code that lost its leading zero (`111.0`) → `0111`. */
function naceCode(raw: string | undefined): string | null {
  const t = clean(raw);
  if (t === null) return null;
  const m = /^(\d+)(?:\.0+)?$/.exec(t);
  if (!m) return t;
  return m[1]!.length === 3 ? `0${m[1]}` : m[1]!;
}

/** County of a registered office: the last address lines that name one (`Co. Cork`, `Dublin 4`). */
function addressCounty(lines: string[]): string | null {
  for (let i = lines.length - 1; i >= Math.max(0, lines.length - 2); i--) {
    const parts = lines[i]!.split(',')
      .map((p) => p.trim())
      .reverse();
    for (const p of parts) {
      const c = resolveCounty(p) ?? resolveCounty(p.replace(/\s+\d+\s*w?$/i, ''));
      if (c) return c;
    }
  }
  return null;
}

/**
 * Turn one record of the CRO company extract into a `CompanyRow`, or a reject: company_num
 * missing / not a whole number, company_name missing, or an invalid date (detail = column).
 */
export function normaliseCompany(rec: Record<string, string>, file: string, line: number): CompanyRow | Reject {
  const num = companyNumber(rec, file, line);
  if (typeof num !== 'string') return num;
  const name = clean(rec.company_name);
  if (name === null) return reject('companies', file, line, 'missing_field', 'company_name', num);
  const d = dates(
    rec,
    ['company_reg_date', 'last_ar_date', 'last_accounts_date', 'comp_dissolved_date', 'company_status_date'] as const,
    file,
    line,
    num,
  );
  if (isReject(d)) return d;
  const addressLines = [rec.company_address_1, rec.company_address_2, rec.company_address_3, rec.company_address_4]
    .map(clean)
    .filter((s): s is string => s !== null);
  return {
    company_number: num,
    company_name: name,
    name_key: companyNameKey(name),
    status: clean(rec.company_status),
    status_code: clean(rec.company_status_code),
    company_type: clean(rec.company_type),
    reg_date: d.company_reg_date,
    last_ar_date: d.last_ar_date,
    last_accounts_date: d.last_accounts_date,
    dissolved_date: d.comp_dissolved_date,
    status_date: d.company_status_date,
    address: addressLines.length ? addressLines.join(', ') : null,
    county: addressCounty(addressLines),
    eircode_routing_key: routingKey(rec.eircode),
    nace_code: naceCode(rec.nace_v2_code),
    line,
  };
}

/**
 * Turn one record of the CRO filings history into a `FilingRow`, or a reject: company_num,
 * filing_type or received_date missing, or an invalid date (detail = column).
 */
export function normaliseFiling(rec: Record<string, string>, file: string, line: number): FilingRow | Reject {
  const num = companyNumber(rec, file, line);
  if (typeof num !== 'string') return num;
  const type = clean(rec.filing_type);
  if (type === null) return reject('companies', file, line, 'missing_field', 'filing_type', num);
  const d = dates(rec, ['received_date', 'effective_date'] as const, file, line, num);
  if (isReject(d)) return d;
  if (d.received_date === null) return reject('companies', file, line, 'missing_field', 'received_date', num);
  return {
    company_number: num,
    document_number: clean(rec.document_number),
    filing_type: type,
    description: clean(rec.filing_description),
    filing_date: d.received_date,
    effective_date: d.effective_date,
    line,
  };
}

/**
 * Read CRO files (extracts and filings, in any mix; the kind is recognised per file). Duplicates
 * are rejected as `duplicate`: companies by company number, filings by document number; the
 * later row is kept in the earlier one's position and the earlier row becomes the reject.
 */
export async function readCompanies(
  files: string[],
): Promise<{ companies: AdapterResult<CompanyRow>; filings: AdapterResult<FilingRow> }> {
  const companies = new Map<string, { row: CompanyRow; file: string }>();
  const filings: FilingRow[] = [];
  const filingAt = new Map<string, { at: number; file: string }>();
  const companyRejects: Reject[] = [];
  const filingRejects: Reject[] = [];
  let companyLines = 0;
  let filingLines = 0;
  for (const file of files) {
    const rejects: Reject[] = [];
    const { lines, kind } = await scanCsv(
      file,
      'companies',
      [COMPANY_LAYOUT, FILING_LAYOUT],
      (k, rec, line) => {
        if (k === 'company') {
          const r = normaliseCompany(rec, file, line);
          if (isReject(r)) return void companyRejects.push(r);
          const prev = companies.get(r.company_number);
          if (prev) {
            companyRejects.push(
              reject('companies', prev.file, prev.row.line, 'duplicate', keptDetail(file, line), r.company_number),
            );
          }
          companies.set(r.company_number, { row: r, file });
        } else {
          const r = normaliseFiling(rec, file, line);
          if (isReject(r)) return void filingRejects.push(r);
          const dn = r.document_number;
          const prev = dn === null ? undefined : filingAt.get(dn);
          if (prev) {
            filingRejects.push(
              reject('companies', prev.file, filings[prev.at]!.line, 'duplicate', keptDetail(file, line), dn),
            );
            filings[prev.at] = r;
            filingAt.set(dn!, { at: prev.at, file });
          } else {
            if (dn !== null) filingAt.set(dn, { at: filings.length, file });
            filings.push(r);
          }
        }
      },
      (r) => rejects.push(r),
    );
    // Malformed rows belong to the file's kind; an unknown header is counted with companies.
    if (kind === 'filing') {
      filingRejects.push(...rejects);
      filingLines += lines;
    } else {
      companyRejects.push(...rejects);
      companyLines += lines;
    }
  }
  return {
    companies: { rows: [...companies.values()].map((c) => c.row), rejects: companyRejects, lines: companyLines },
    filings: { rows: filings, rejects: filingRejects, lines: filingLines },
  };
}
