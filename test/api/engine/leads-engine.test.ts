/**
 * The leads engine (api/engine/leads-engine.ts) on the tiny release: its place names and search
 * statistics are the ones DuckDB reads from the Parquet files; its list pages are the one masking
 * function's records, byte for byte, on the fast path and the fallback alike; and — the point of
 * the one schema walk — marking ANY field of the lead, lead-detail or lead-neighbour schemas
 * enriched masks it everywhere it appears in a list page and a detail, nested sections and list
 * items included, for a scope without enriched access, and changes nothing for one with it.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openApiDb, type ApiDb } from '../../../api/duckdb/db.ts';
import { keptRelease } from '../../../api/releases/kept-release.ts';
import { LeadsEngine, type JsonBody, type LeadsPageQuery } from '../../../api/engine/leads-engine.ts';
import {
  maskedFor,
  maskingFor,
  maskRecord,
  projectSchemas,
  type JsonSchema,
  type Masking,
  type SchemaSet,
} from '../../../api/access/masking.ts';
import { LEAD_COLUMNS } from '../../../api/query/leads-query.ts';
import { loadReleaseSources } from '../../../api/releases/release-lookups.ts';
import { CAPABILITIES, SCOPES } from '../../../api/access/scopes.ts';
import { reuseEngine, tinyRelease } from '../../helpers/api.ts';

type Json = any;

let db: ApiDb;
let engine: LeadsEngine;
let releaseDir: string;
let releaseId: string;

test.before(async () => {
  const rel = await tinyRelease();
  releaseDir = rel.dir;
  releaseId = rel.id;
  db = await openApiDb({ connections: 1, threads: 1, memoryLimit: '256MB' });
  // the engine the test servers get (built by the index child once, test/helpers/api.ts)
  engine = await reuseEngine(rel.id, rel.dir);
});
test.after(() => db.close());

const text = (body: JsonBody): string => {
  const s = body.bytes.toString('utf8');
  body.done();
  return s;
};
const pageText = (q: LeadsPageQuery, m: Masking): string =>
  text(engine.page(q, m).json({ page: 1, next_cursor: null }));
const detailText = (id: number, m: Masking): string | null => {
  const d = engine.detail(id, m);
  return d ? text(d.json()) : null;
};
const FIRST_PAGE: LeadsPageQuery = { filters: {}, sort: 'newest', pageSize: 60, offset: 0, after: null };

test('places and the search statistics are those DuckDB reads from the Parquet files', async () => {
  const fromFiles = await loadReleaseSources(db, keptRelease(releaseDir.replace(/\/releases\/[^/]+$/, ''), releaseId)!);
  const sorted = (m: Map<string, string>) => [...m.entries()].sort();
  assert.equal(sorted(engine.places().authorities), sorted(fromFiles.places.authorities));
  assert.equal(sorted(engine.places().counties), sorted(fromFiles.places.counties));
  assert.ok(engine.places().counties.size > 1);
  // every multi-value filter of the filter table (authority, county, application_type, …)
  assert.equal([...engine.places().values.keys()].sort(), [...fromFiles.places.values.keys()].sort());
  for (const [name, map] of fromFiles.places.values) {
    assert.equal(sorted(engine.places().values.get(name)!), sorted(map), name);
    assert.ok(map.size > 0, `${name} has values`);
  }
  assert.is(engine.avgdl, fromFiles.leads.search?.avgdl ?? null);
  assert.type(engine.avgdl, 'number');
});

test('count is the total of a page; unknown ids have no detail', () => {
  for (const filters of [
    {},
    { county: ['Cork', 'Dublin'] },
    { q: 'extension rear' },
    { min_value: 250_000, status: ['granted'] },
  ]) {
    const total = engine.page({ ...FIRST_PAGE, filters }, maskingFor('ent_api')).total;
    assert.is(engine.count(filters), total, JSON.stringify(filters));
  }
  assert.is(engine.count({}), engine.size);
  assert.is(engine.detail(-1, maskingFor('ent_api')), null);
  assert.is(engine.detail(1e9, maskingFor('ent_api')), null);
});

test('a list page is the records of maskRecord, byte for byte, for every scope (fast path and fallback)', async () => {
  const rows = await db.all(`SELECT ${LEAD_COLUMNS.join(', ')} FROM read_parquet('${releaseDir}/leads.parquet')`);
  const byId = new Map(rows.map((r) => [r['id'] as number, r]));
  // a schema set where an enriched field sits inside a column (verticals' items): the byte writer
  // cannot mask that, so the engine masks each row as a record — and must give the same bytes
  const nested = cloneSet(projectSchemas());
  (nested.get('lead.schema.json')!.properties as Record<string, JsonSchema>)['verticals']!['items'] = {
    type: 'object',
    properties: { x: { 'x-enriched': true } },
  };
  for (const scope of SCOPES) {
    const m = maskingFor(scope);
    const page = engine.page(FIRST_PAGE, m);
    const body = JSON.parse(pageText(FIRST_PAGE, m));
    assert.is(body.results.length, 60);
    assert.equal(body._meta.masked, maskedFor('lead', scope));
    const want = body.results.map((r: Json) => JSON.stringify(maskRecord('lead', byId.get(r.id)!, scope).record));
    assert.is(
      pageText(FIRST_PAGE, m),
      `{"total":${page.total},"page":1,"page_size":60,"next_cursor":null,"results":[${want.join(',')}],"_meta":${JSON.stringify(body._meta)}}`,
    );
    const fallback = JSON.parse(pageText(FIRST_PAGE, maskingFor(scope, nested)));
    assert.equal(fallback.results, body.results, `${scope}: fallback`);
  }
});

// ——— marking any field enriched masks it everywhere it appears ———

/** A deep copy of a schema set (to mark a field in). */
function cloneSet(set: SchemaSet): Map<string, JsonSchema> {
  return new Map([...set].map(([f, s]) => [f, structuredClone(s)]));
}

/** The node at a JSON pointer. */
function nodeAt(set: SchemaSet, id: string): JsonSchema | undefined {
  const [file, pointer = ''] = id.split('#');
  let node: any = set.get(file!);
  for (const part of pointer.split('/').filter(Boolean)) node = node?.[part];
  return node;
}

/** `file#/pointer` of a `$ref` written in `file`. */
const refId = (ref: string, file: string): string =>
  ref.startsWith('#') ? `${file}${ref}` : ref.includes('#') ? ref : `${ref}#`;

/**
 * `f(set, id)` remembered per schema set and id: `chain` and `forms` are asked again for the same
 * ids at every value of every served record (the set they walk is never changed after it is read).
 */
function perId(f: (set: SchemaSet, id: string) => string[]): (set: SchemaSet, id: string) => string[] {
  const memo = new WeakMap<SchemaSet, Map<string, string[]>>();
  return (set, id) => {
    let m = memo.get(set);
    if (!m) memo.set(set, (m = new Map()));
    let r = m.get(id);
    if (!r) m.set(id, (r = f(set, id)));
    return r;
  };
}

/** The schema ids a node stands for: itself, then its `$ref` chain. */
const chain = perId((set: SchemaSet, id: string): string[] => {
  const out = [id];
  for (let node = nodeAt(set, id); typeof node?.['$ref'] === 'string' && out.length < 20;) {
    const next = refId(node['$ref'] as string, out.at(-1)!.split('#')[0]!);
    out.push(next);
    node = nodeAt(set, next);
  }
  return out;
});

/** The object / array forms of a value's schema: the node, its `$ref` chain and its `anyOf` alternatives. */
const forms = perId((set: SchemaSet, id: string): string[] => {
  const out: string[] = [];
  for (const c of chain(set, id)) {
    out.push(c);
    const alts = nodeAt(set, c)?.['anyOf'];
    if (Array.isArray(alts)) alts.forEach((_, i) => out.push(...forms(set, `${c}/anyOf/${i}`)));
  }
  return out;
});

/**
 * Every path of `value` (described by the schema `id`) that holds the field `target` (a schema
 * id): a property whose schema is `target` or `$ref`s to it. Paths are lists of keys / indices.
 */
function appearances(
  set: SchemaSet,
  target: string,
  value: unknown,
  id: string,
  path: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  if (value === null || typeof value !== 'object') return out;
  const fs = forms(set, id);
  if (Array.isArray(value)) {
    const items = fs.find((f) => nodeAt(set, f)?.['items']);
    if (items) value.forEach((v, i) => appearances(set, target, v, `${items}/items`, [...path, i], out));
    return out;
  }
  for (const [k, v] of Object.entries(value)) {
    const owner = fs.find((f) => (nodeAt(set, f)?.['properties'] as Record<string, unknown> | undefined)?.[k]);
    if (!owner) continue;
    const prop = `${owner}/properties/${k}`;
    if (chain(set, prop).includes(target)) out.push([...path, k]);
    appearances(set, target, v, prop, [...path, k], out);
  }
  return out;
}

/** The value at a path; null when the path runs into a null (a masked section holds nothing). */
function valueAt(v: unknown, path: (string | number)[]): unknown {
  for (const k of path) {
    if (v === null || v === undefined) return null;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

/** `v` with the value at each path set to null (where the path still exists). */
function nulledAt(v: Json, paths: (string | number)[][]): Json {
  const out = structuredClone(v);
  for (const p of paths) {
    const parent = valueAt(out, p.slice(0, -1)) as Json;
    if (parent !== null && typeof parent === 'object') parent[p.at(-1)!] = null;
  }
  return out;
}

/** How `_meta.masked` names a path: dotted, with `[]` for the items of a list. */
const fieldName = (p: (string | number)[]): string =>
  p
    .map((k) => (typeof k === 'number' ? '[]' : `.${k}`))
    .join('')
    .replace(/^\./, '')
    .replace(/\.\[\]/g, '[]');

/** Every field of the lead, lead-detail (with its sections and list items) and lead-neighbour schemas. */
function everyField(set: SchemaSet): string[] {
  const ids: string[] = [];
  const props = (id: string) =>
    Object.keys((nodeAt(set, id)?.['properties'] as object | undefined) ?? {}).map((k) => `${id}/properties/${k}`);
  ids.push(
    ...props('lead.schema.json#'),
    ...props('lead-detail.schema.json#'),
    ...props('lead-neighbour.schema.json#'),
  );
  for (const d of Object.keys(nodeAt(set, 'lead-detail.schema.json#/$defs') ?? {}))
    ids.push(...props(`lead-detail.schema.json#/$defs/${d}`));
  return ids;
}

test('marking any field enriched masks it everywhere it appears, nested sections and list items included', () => {
  const real = projectSchemas();
  // leads whose details hold every section: nearby leads, recent sales, contractor, company, suppliers, filings
  const full = (id: number) => JSON.parse(detailText(id, maskingFor('ent_api'))!);
  const ids: number[] = [];
  const want = ['nearby', 'sales', 'contractor', 'company', 'suppliers', 'filings'] as const;
  const has = (d: Json): Record<(typeof want)[number], boolean> => ({
    nearby: d.area_comparables.nearby_leads.length > 0,
    sales: d.area_comparables.recent_sales.length > 0,
    contractor: d.main_contractor !== null && d.main_contractor.company !== null,
    company: d.registered_company !== null,
    suppliers: (d.suppliers ?? []).length > 0,
    filings: (d.company_filings ?? []).length > 0,
  });
  const covered = new Set<string>();
  const pageIds = JSON.parse(pageText({ ...FIRST_PAGE, pageSize: 1000 }, maskingFor('ent_api'))).results.map(
    (r: Json) => r.id as number,
  );
  for (const id of pageIds) {
    const h = has(full(id));
    if (want.some((w) => h[w] && !covered.has(w))) {
      ids.push(id);
      for (const w of want) if (h[w]) covered.add(w);
    }
  }
  assert.equal([...covered].sort(), [...want].sort(), 'the tiny release has every section somewhere');

  const served = (set: SchemaSet, scope: 'commonwealth' | 'ent_api') => {
    const m = maskingFor(scope, set);
    // a page with `near`, so that its results carry `distance_m` too
    return {
      page: pageText({ ...FIRST_PAGE, filters: { near: { lat: 53.35, lon: -6.26, radius_m: 50_000 } } }, m),
      details: ids.map((id) => detailText(id, m)!),
    };
  };
  const base = { cw: served(real, 'commonwealth'), ea: served(real, 'ent_api') };
  const baseMasked = {
    page: JSON.parse(base.cw.page)._meta.masked.map((m: Json) => m.field) as string[],
    detail: JSON.parse(base.cw.details[0]!)._meta.masked.map((m: Json) => m.field) as string[],
  };

  const fields = everyField(real);
  assert.ok(fields.length > 150, `${fields.length} fields`);
  let nested = 0;
  for (const field of fields) {
    const set = cloneSet(real);
    nodeAt(set, field)!['x-enriched'] = true;
    const cw = served(set, 'commonwealth');
    const ea = served(set, 'ent_api');
    // an enriched scope sees exactly what it saw before
    assert.is(ea.page, base.ea.page, `${field}: ent_api page unchanged`);
    assert.equal(ea.details, base.ea.details, `${field}: ent_api details unchanged`);
    // commonwealth: the field is null at every path where it appears, and nothing else changed
    const check = (
      kind: 'page' | 'detail',
      got: string,
      cwBase: string,
      eaBase: string,
      root: string,
      meta: string[],
    ) => {
      const full = JSON.parse(eaBase);
      const { _meta, ...record } = full;
      const paths: (string | number)[][] =
        kind === 'page'
          ? record.results.flatMap((r: Json, i: number) =>
              appearances(real, field, r, root).map((p) => ['results', i, ...p]),
            )
          : appearances(real, field, record, root);
      const body = JSON.parse(got);
      const before = JSON.parse(cwBase);
      for (const p of paths) assert.is(valueAt(body, p), null, `${field}: ${kind} ${p.join('.')} is null`);
      const { _meta: gotMeta, ...gotRest } = body;
      const { _meta: _b, ...beforeRest } = before;
      assert.equal(gotRest, nulledAt(beforeRest, paths), `${field}: ${kind} otherwise unchanged`);
      // _meta.masked: the fields of before in their order, then each newly masked path once
      const listed = gotMeta.masked.map((m: Json) => m.field) as string[];
      assert.equal(
        listed.filter((f) => meta.includes(f)),
        meta,
        `${field}: ${kind} keeps the masked fields and their order`,
      );
      assert.is(new Set(listed).size, listed.length, `${field}: ${kind} lists each field once`);
      for (const p of paths.map((q) => (kind === 'page' ? q.slice(2) : q))) {
        // inside a section the scope sees as null, nothing more is named
        const inMasked = p.some(
          (_, j) => j > 0 && typeof p[j - 1] !== 'number' && meta.includes(fieldName(p.slice(0, j))),
        );
        if (!inMasked)
          assert.ok(listed.includes(fieldName(p)), `${field}: ${kind} lists ${fieldName(p)} (${listed.join(', ')})`);
      }
      return paths;
    };
    const pagePaths = check('page', cw.page, base.cw.page, base.ea.page, 'lead.schema.json#', baseMasked.page);
    let detailPaths = 0;
    ids.forEach((id, i) => {
      detailPaths += check(
        'detail',
        cw.details[i]!,
        base.cw.details[i]!,
        base.ea.details[i]!,
        'lead-detail.schema.json#',
        baseMasked.detail,
      ).length;
    });
    if (field.startsWith('lead-neighbour.schema.json')) {
      // the neighbour table's schema describes no served field (nearby_leads items are lead-detail's `nearby_lead`)
      assert.is(pagePaths.length + detailPaths, 0, field);
      continue;
    }
    assert.ok(pagePaths.length + detailPaths > 0, `${field} appears in the responses checked`);
    if (detailPaths > ids.length) nested++;
  }
  assert.ok(nested > 20, `${nested} fields appear more than once per detail (sections, list items)`);
});

test('anchors: a lead field marked enriched is null in the list, the detail, its project section and every nearby lead', () => {
  const set = cloneSet(projectSchemas());
  nodeAt(set, 'lead.schema.json#/properties/est_value')!['x-enriched'] = true;
  const cw = maskingFor('commonwealth', set);
  const page = JSON.parse(pageText(FIRST_PAGE, cw));
  assert.ok(page.results.every((r: Json) => r.est_value === null));
  assert.ok(page._meta.masked.some((m: Json) => m.field === 'est_value'));
  let withNeighbours = 0;
  for (const r of page.results) {
    const d = JSON.parse(detailText(r.id, cw)!);
    assert.is(d.est_value, null);
    assert.is(d.project.est_value, null);
    for (const n of d.area_comparables.nearby_leads) assert.is(n.est_value, null);
    if (d.area_comparables.nearby_leads.length > 0) withNeighbours++;
    const listed = d._meta.masked.map((m: Json) => m.field);
    for (const f of ['est_value', 'project.est_value', 'area_comparables.nearby_leads[].est_value'])
      assert.ok(listed.includes(f), f);
    // unmarked, the same lead serves the values
    const plain = JSON.parse(detailText(r.id, maskingFor('commonwealth'))!);
    assert.is(plain.project.est_value, plain.est_value);
  }
  assert.ok(withNeighbours > 10, `${withNeighbours} leads with nearby leads`);
});

test('exportLines: CSV and JSON Lines from the row store; a field masked inside a column leaves the CSV to DuckDB and JSON Lines masked lead by lead', () => {
  const lines = (format: 'json' | 'csv', m: Masking): string[] | null => {
    const next = engine.exportLines(format, {}, m, 7); // small chunks: the keyset between them runs
    if (next === null) return null;
    let all = '';
    for (let c = next(); c !== null; c = next()) all += text(c);
    return all.split(format === 'json' ? '\n' : '\r\n').slice(0, -1);
  };
  const listed = (m: Masking): Json[] => JSON.parse(pageText({ ...FIRST_PAGE, pageSize: 5000 }, m)).results;
  const real = projectSchemas();
  // an enriched field inside a column's value (no lead column holds an object today: one made so)
  const inner = cloneSet(real);
  const lead = nodeAt(inner, 'lead.schema.json#')!['properties'] as Record<string, JsonSchema>;
  lead['verticals'] = { type: 'object', properties: { source: { type: 'string', 'x-enriched': true } } };
  for (const scope of SCOPES) {
    for (const [name, set] of [
      ['project schemas', real],
      ['an enriched field inside verticals', inner],
    ] as const) {
      const m = maskingFor(scope, set);
      const json = lines('json', m)!;
      const results = listed(m);
      assert.ok(results.length > 500, `${results.length} leads`);
      assert.equal(
        json.map((l) => JSON.parse(l)),
        results,
        `${scope}, ${name}: JSON Lines are the list's results, in its order`,
      );
      const csv = lines('csv', m);
      const cannot = name !== 'project schemas' && !CAPABILITIES[scope].enriched;
      if (cannot) assert.is(csv, null, `${scope}, ${name}: the CSV is left to DuckDB`);
      else {
        assert.is(csv!.length, results.length, `${scope}, ${name}: a CSV line per lead`);
        assert.equal(
          csv!.map((l) => Number(l.split(',')[0])),
          results.map((r) => r.id),
          `${scope}, ${name}: CSV ids in the list's order`,
        );
      }
    }
  }
});

test.run();
