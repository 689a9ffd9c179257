/**
 * The data team's dry run behind `leads ingest <source> <file…> --json`: read files through one
 * source adapter and report how every data line was accounted for (rows kept, rejects by
 * reason), without writing anything.
 */
import type { SourceName } from './sources/formats.ts';
import { countReasons } from './sources/common.ts';
import { readCommencements } from './sources/commencements.ts';
import { readPlanning } from './sources/planning.ts';
import { readPpr } from './sources/ppr.ts';
import type { AdapterResult } from './types.ts';

export interface IngestReport {
  source: SourceName;
  rows: number;
  rejects: number;
  reasons: Record<string, number>;
  lines: number;
  files: string[];
}

/**
 * Read `files` with the adapter of `source` and summarise the result. For `companies` the
 * company and filing results are concatenated (rows, rejects and lines add up). The adapters
 * guarantee rows + rejects = lines; the report lets the caller check it.
 * @example const { report } = await ingestFiles('ppr', ['PPR-2023-02.csv']); // report.rows, report.reasons
 */
export async function ingestFiles(
  source: SourceName,
  files: string[],
): Promise<{ report: IngestReport; result: AdapterResult<unknown> }> {
  const result = await readSource(source, files);
  const report: IngestReport = {
    source,
    rows: result.rows.length,
    rejects: result.rejects.length,
    reasons: countReasons(result.rejects),
    lines: result.lines,
    files: [...files],
  };
  return { report, result };
}

async function readSource(source: SourceName, files: string[]): Promise<AdapterResult<unknown>> {
  switch (source) {
    case 'planning':
      return readPlanning(files);
    case 'commencements':
      return readCommencements(files);
    case 'ppr':
      return readPpr(files);
    case 'companies': {
      // loaded on demand: the other adapters stay usable whatever state this module is in
      const { readCompanies } = await import('./sources/companies.ts');
      const { companies, filings } = await readCompanies(files);
      return {
        rows: [...companies.rows, ...filings.rows],
        rejects: [...companies.rejects, ...filings.rejects],
        lines: companies.lines + filings.lines,
      };
    }
    case 'infrastructure': {
      const { readInfrastructure } = await import('./sources/infrastructure.ts');
      return readInfrastructure(files);
    }
    case 'rents': {
      const { readRents } = await import('./sources/rents.ts');
      return readRents(files);
    }
    case 'materials': {
      const { readMaterials } = await import('./sources/materials.ts');
      return readMaterials(files);
    }
    default: {
      const never: never = source;
      throw new Error(`unknown source ${String(never)}`);
    }
  }
}
