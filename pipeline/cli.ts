/**
 * `leads` commands for the data team: fetch, refresh, generate, ingest. Each command parses its
 * flags, builds a typed config and calls the pipeline; exit codes: 0 ok, 1 failed or blocked,
 * 2 usage error.
 */
import { parseArgs } from 'node:util';
import { readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, loadPipelineConfig, PIPELINE_DEFAULTS } from './config.ts';
import { runPipeline, type RefreshSummary } from './run.ts';
import { generateRaw, SCALES } from './synth/generate.ts';
import { ingestFiles } from './ingest.ts';
import { SOURCE_NAMES, type SourceName } from './sources/formats.ts';
import { RefreshLockedError } from './release/publish.ts';
import { defaultFetchDeps, runFetch } from './fetch/run.ts';
import { generatedLog, writeFetchLog } from './fetch/log.ts';
import { loadSourcesFile, SourcesFileError } from './fetch/sources.ts';
import { classifyApplication, type ClassifyInput } from './normalise/classify.ts';
import { processIo, type CliIo } from '../common/cli-io.ts';

type Command = (args: string[], io: CliIo) => Promise<number>;

/** The help text (a function: it reads the sources file, and nothing runs on import). */
const usage = (): string => `usage: leads <command> [options]

Data pipeline:
  fetch [--source S…] [--raw DIR] [--full] [--json]
                         download each source from its publisher into the raw folder
                         (endpoints: pipeline/fetch/sources.json, each URL overridable by its
                         FETCH_URL_* variable; --full: every ArcGIS record, not the window)
  refresh [--raw DIR] [--force] [--json] [--quiet] [--generate-if-empty]
                         build a release from raw files and publish it atomically
  generate [--scale tiny|small|default|stress|N] [--seed N] [--week N] [--out DIR] [--truth FILE]
                         write deterministic raw source files in the publishers' formats
                         (--truth: also write which names are individuals' and organisations',
                         for the privacy tests; keep FILE outside the raw folder)
  ingest <source> <file…> [--json]
                         parse files without publishing; prints rows, rejects and reasons
                         (sources: ${SOURCE_NAMES.join(', ')})
  classify               the refresh's classification of planning descriptions: one per line
                         on stdin (a line starting with '{' is a JSON object of planning fields:
                         description, application_type, application_number, land_use_code,
                         num_units, one_off_house, floor_area_m2); one JSON object per line on
                         stdout: use_class, works_kind, verticals, explicit_verticals,
                         vertical_evidence, demolition

Environment: ${Object.values(PIPELINE_DEFAULTS)
  .filter((d) => d.env)
  .map((d) => d.env)
  .join(', ')}
Fetch URLs: ${loadSourcesFile()
  .downloads.map((d) => d.urlEnv)
  .filter((v, i, a) => a.indexOf(v) === i)
  .join(', ')}
`;

/** Planning fields a JSON line may carry: the pipeline's names, or the national export's. */
const JSON_FIELDS: Record<keyof ClassifyInput, readonly string[]> = {
  description: ['description', 'DevelopmentDescription', 'details'],
  application_type: ['application_type', 'ApplicationType'],
  application_number: ['application_number', 'ApplicationNumber', 'app_ref'],
  land_use_code: ['land_use_code', 'LandUseCode'],
  num_units: ['num_units', 'NumResidentialUnits'],
  one_off_house: ['one_off_house', 'OneOffHouse'],
  floor_area_m2: ['floor_area_m2', 'FloorArea'],
};

/**
 * `leads classify` on one input line: a description, or a JSON object of planning fields. The
 * answer never repeats the description (it may name a person); a JSON line's
 * `application_number` is echoed so answers can be matched to rows.
 *
 * @example classifyLine('Single storey extension to rear').use_class // 'residential_extension'
 */
export function classifyLine(line: string): Record<string, unknown> {
  const text = line.trim();
  if (!text.startsWith('{')) return { ...classifyApplication({ description: text }) };
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    return { error: `not a JSON object: ${(e as Error).message}` };
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) return { error: 'not a JSON object' };
  const get = (k: keyof ClassifyInput): unknown =>
    JSON_FIELDS[k].map((n) => rec[n]).find((v) => v !== undefined && v !== null && v !== '');
  const str = (v: unknown): string | null => (v === undefined ? null : String(v));
  const num = (v: unknown): number | null => (v === undefined || !Number.isFinite(Number(v)) ? null : Number(v));
  const description = get('description');
  if (typeof description !== 'string')
    return { error: 'no description (description, DevelopmentDescription or details)' };
  const oneOff = get('one_off_house');
  const input: ClassifyInput = {
    description,
    application_type: str(get('application_type')),
    application_number: str(get('application_number')),
    land_use_code: str(get('land_use_code')),
    num_units: num(get('num_units')),
    one_off_house:
      oneOff === true || (typeof oneOff === 'string' && /^(?:y|yes|true|1)$/i.test(oneOff.trim())) || oneOff === 1,
    floor_area_m2: num(get('floor_area_m2')),
  };
  return {
    ...(input.application_number !== null ? { application_number: input.application_number } : {}),
    ...classifyApplication(input),
  };
}

const commands: Record<string, Command> = {
  async classify(args, { out, err, env, stdin }) {
    parseArgs({ args, options: {} });
    let failed = 0;
    let buf = '';
    const emit = (line: string): void => {
      const r = classifyLine(line);
      if ('error' in r) failed++;
      out(JSON.stringify(r));
    };
    for await (const chunk of stdin) {
      buf += String(chunk);
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        emit(buf.slice(0, nl).replace(/\r$/, ''));
        buf = buf.slice(nl + 1);
      }
    }
    if (buf.length > 0) emit(buf.replace(/\r$/, ''));
    if (failed > 0) err(`classify: ${failed} line(s) could not be read (an {"error": …} line each)`);
    return failed > 0 ? 1 : 0;
  },

  async fetch(args, { out, err, env, stdin }) {
    const { values } = parseArgs({
      args,
      options: {
        source: { type: 'string', multiple: true, default: [] },
        raw: { type: 'string' },
        full: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    const config = loadPipelineConfig(env, values.raw ? { rawDir: resolve(values.raw) } : {});
    const sources = values.source
      .flatMap((s) => s.split(','))
      .map((s) => s.trim())
      .filter(Boolean);
    const summary = await runFetch({ rawDir: config.rawDir, sources, full: values.full, env }, defaultFetchDeps(err));
    if (values.json) out(JSON.stringify(summary, null, 2));
    const c = summary.counts;
    err(
      `fetch: ${c.fetched} fetched, ${c.not_modified} not modified, ${c.failed} failed, ${c.skipped} skipped (log: ${join(config.rawDir, 'fetch-log.json')})`,
    );
    for (const d of summary.downloads) if (d.status === 'failed') err(`  ${d.error}`);
    return c.failed > 0 ? 1 : 0;
  },

  async refresh(args, { out, err, env, stdin }) {
    const { values } = parseArgs({
      args,
      options: {
        raw: { type: 'string' },
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        'generate-if-empty': { type: 'boolean', default: false },
        seed: { type: 'string', default: '1' },
        scale: { type: 'string', default: 'default' },
      },
    });
    const config = loadPipelineConfig(env, {
      ...(values.raw ? { rawDir: resolve(values.raw) } : {}),
      force: values.force,
      progress: !values.quiet,
    });
    if (values['generate-if-empty'] && !hasRawFiles(config.rawDir)) {
      err(
        `no raw files in ${config.rawDir}: generating the default dataset (scale ${values.scale}, seed ${values.seed})`,
      );
      const scale = parseScale(values.scale);
      const s = await generateRaw({ outDir: config.rawDir, scale, seed: Number(values.seed), week: 1 });
      await writeFetchLog(config.rawDir, generatedLog(new Date(), { seed: Number(values.seed), scale, week: 1 }));
      err(`generated ${s.files.length} files for the week of ${s.snapshotDate}`);
    }
    const summary = await runPipeline(config, { now: () => new Date(), log: err });
    if (values.json) out(JSON.stringify(summary, null, 2));
    else err(formatSummary(summary));
    return summary.status === 'blocked' ? 1 : 0;
  },

  async generate(args, { out, err, env, stdin }) {
    const { values } = parseArgs({
      args,
      options: {
        scale: { type: 'string', default: 'default' },
        seed: { type: 'string', default: '1' },
        week: { type: 'string', default: '1' },
        out: { type: 'string' },
        truth: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
    });
    const config = loadPipelineConfig(env);
    const seed = Number(values.seed);
    const week = Number(values.week);
    if (!Number.isInteger(seed) || seed < 0)
      throw new UsageError(`--seed must be a non-negative integer, got ${values.seed}`);
    if (!Number.isInteger(week) || week < 1) throw new UsageError(`--week must be an integer ≥ 1, got ${values.week}`);
    const outDir = values.out ? resolve(values.out) : config.rawDir;
    const t = performance.now();
    const truthFile = values.truth ? resolve(values.truth) : undefined;
    if (truthFile && truthFile.startsWith(outDir + '/'))
      throw new UsageError('--truth must be outside the raw folder (--out): the pipeline must never read it');
    const scale = parseScale(values.scale);
    const s = await generateRaw({ outDir, scale, seed, week, truthFile });
    await writeFetchLog(outDir, generatedLog(new Date(), { seed, scale, week }));
    if (values.json) out(JSON.stringify(s, null, 2));
    else {
      for (const f of s.files) err(`${f.rows.toLocaleString('en-IE').padStart(10)} rows  ${f.path}`);
      err(
        `week ${s.week} (snapshot ${s.snapshotDate}) written to ${outDir} in ${((performance.now() - t) / 1000).toFixed(1)} s`,
      );
    }
    return 0;
  },

  async ingest(args, { out, err, env, stdin }) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: { json: { type: 'boolean', default: false } },
    });
    const [source, ...files] = positionals;
    if (!source || !(SOURCE_NAMES as readonly string[]).includes(source)) {
      throw new UsageError(`ingest needs a source (${SOURCE_NAMES.join(', ')}), got ${source ?? 'nothing'}`);
    }
    if (files.length === 0) throw new UsageError('ingest needs at least one file');
    for (const f of files) if (!existsSync(f)) throw new UsageError(`no such file: ${f}`);
    const { report } = await ingestFiles(
      source as SourceName,
      files.map((f) => resolve(f)),
    );
    if (values.json) out(JSON.stringify(report));
    else {
      out(`${report.source}: ${report.lines} lines → ${report.rows} rows, ${report.rejects} rejects`);
      for (const [r, n] of Object.entries(report.reasons)) out(`  ${r}: ${n}`);
    }
    return 0;
  },
};

class UsageError extends Error {}

function parseScale(s: string): number {
  if (s in SCALES) return SCALES[s as keyof typeof SCALES];
  const n = Number(s);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`--scale must be tiny, small, default, stress or a positive number, got ${s}`);
  return n;
}

function hasRawFiles(rawDir: string): boolean {
  if (!existsSync(rawDir)) return false;
  return readdirSync(rawDir, { withFileTypes: true }).some(
    (d) => d.isDirectory() && readdirSync(join(rawDir, d.name)).length > 0,
  );
}

/** The end-of-refresh table for people. */
export function formatSummary(s: RefreshSummary): string {
  const lines: string[] = ['', s.message, ''];
  if (Object.keys(s.sources).length) {
    lines.push('source            lines       rows    rejects');
    for (const [name, c] of Object.entries(s.sources)) {
      lines.push(`${name.padEnd(14)} ${fmt(c.lines, 8)} ${fmt(c.rows, 10)} ${fmt(c.rejects, 10)}`);
    }
    lines.push('');
  }
  if (s.changes) {
    lines.push('table             new    updated    removed  unchanged');
    for (const [t, c] of Object.entries(s.changes)) {
      lines.push(
        `${t.padEnd(14)} ${fmt(c.new, 6)} ${fmt(c.updated, 10)} ${fmt(c.removed, 10)} ${fmt(c.unchanged, 10)}`,
      );
    }
    lines.push('');
  }
  if (Object.keys(s.counts).length) {
    lines.push(
      'published: ' +
        Object.entries(s.counts)
          .map(([k, v]) => `${k} ${v.toLocaleString('en-IE')}`)
          .join(', '),
    );
  }
  if (s.releaseBytes !== null) lines.push(`release size ${(s.releaseBytes / 1048576).toFixed(1)} MB on disk`);
  lines.push(`wall ${(s.wallMs / 1000).toFixed(1)} s, peak RSS ${s.peakRssMb} MB (during ${s.peakRssStage})`);
  return lines.join('\n');
}

const fmt = (n: number, w: number): string => n.toLocaleString('en-IE').padStart(w);

/** Run a `leads` command line with `io` (the process's by default); returns the exit code. */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const { out, err } = io;
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    out(usage());
    return name ? 0 : 2;
  }
  const cmd = commands[name];
  if (!cmd) {
    err(`unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  try {
    return await cmd(rest, io);
  } catch (e) {
    if (
      e instanceof UsageError ||
      e instanceof ConfigError ||
      e instanceof SourcesFileError ||
      (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      err(`leads ${name}: ${(e as Error).message}`);
      return 2;
    }
    if (e instanceof RefreshLockedError) {
      err(`leads ${name}: ${e.message}`);
      return 1;
    }
    err(`leads ${name} failed: ${(e as Error).message}`);
    return 1;
  }
}
