/**
 * `make eval`: the classification scored on the hand-labelled real Dublin City descriptions
 * (test/fixtures/classification/dublin-labels.jsonl, keyed by app_ref; the text is read from
 * ../shared/realdata, skipped with a message when absent) and on generated descriptions. Prints
 * the tables of docs/data-quality.md. Usage: node --import tsx pipeline/eval/run.ts [--generated N]
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { classifyApplication } from '../normalise/classify.ts';
import { parseCsv } from '../lib/csv.ts';
import { formatGenerated, scoreGenerated } from './generated.ts';
import { formatReport, scoreClassification, type GoldLabel, type Prediction } from './score.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
export const LABELS = `${ROOT}test/fixtures/classification/dublin-labels.jsonl`;
/** 100 further rows labelled after the rules were reworked on LABELS' rows: the fairer estimate. */
export const VALIDATION_LABELS = `${ROOT}test/fixtures/classification/dublin-validation-labels.jsonl`;
export const REAL_CSV = `${ROOT}../shared/realdata/planning_dublin_city_2010/dublin-city-2009-2011-dev.csv`;

/** The real descriptions by app_ref (`details` column), or null when the shared folder is absent. */
export function readRealDescriptions(path = REAL_CSV): Map<string, string> | null {
  if (!existsSync(path)) return null;
  const [header, ...recs] = parseCsv(readFileSync(path, 'utf8'));
  const ref = header!.fields.indexOf('app_ref');
  const details = header!.fields.indexOf('details');
  return new Map(recs.map((r) => [r.fields[ref]!, r.fields[details] ?? '']));
}

export function readLabels(path = LABELS): GoldLabel[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as GoldLabel);
}

/** The classifier on each labelled row, as `leads classify` sees it (description and reference). */
export function predictReal(labels: readonly GoldLabel[], text: ReadonlyMap<string, string>): Prediction[] {
  return labels.map((g) => {
    const d = text.get(g.app_ref);
    if (d === undefined) throw new Error(`label ${g.app_ref} has no row in the real file`);
    return classifyApplication({ description: d, application_number: g.app_ref });
  });
}

function main(): void {
  const { values } = parseArgs({ options: { generated: { type: 'string', default: '4000' } } });
  const text = readRealDescriptions();
  if (text === null) {
    console.log(`real set skipped: ${REAL_CSV} is absent (the shared real data is not part of the repository)\n`);
  } else {
    const labels = readLabels();
    console.log(
      formatReport(
        'real Dublin City descriptions, development set (dublin-labels.jsonl)',
        scoreClassification(labels, predictReal(labels, text)),
      ),
    );
    console.log('');
    const validation = readLabels(VALIDATION_LABELS);
    console.log(
      formatReport(
        'real Dublin City descriptions, validation set (dublin-validation-labels.jsonl)',
        scoreClassification(validation, predictReal(validation, text)),
      ),
    );
    console.log('');
  }
  console.log(formatGenerated(scoreGenerated(Number(values.generated))));
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) main();
