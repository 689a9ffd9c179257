/**
 * The layout of docs/architecture.md, held by the import graph (issue 30): no import circles in
 * api/, pipeline/ or common/ (type-only imports included: a circle is a type or constant living
 * above its users), pipeline/ and api/ never importing each other, the top of api/ holding only
 * its entry points, and one module per side importing DuckDB's client.
 *
 * The graph is read with the TypeScript compiler's own import scanner (`ts.preProcessFile`), so
 * `import type`, `export … from` and dynamic `import()` with a literal all count.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import ts from 'typescript';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './helpers/tmp.ts';

const ROOTS = ['api', 'pipeline', 'common'];

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) sourceFiles(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** Repo-relative file → the repo-relative files and packages it imports. */
function importGraph(): Map<string, { files: string[]; packages: string[] }> {
  const files = ROOTS.flatMap((r) => sourceFiles(join(REPO_ROOT, r)));
  const graph = new Map<string, { files: string[]; packages: string[] }>();
  for (const f of files) {
    const specs = ts.preProcessFile(readFileSync(f, 'utf8'), true, true).importedFiles.map((i) => i.fileName);
    graph.set(relative(REPO_ROOT, f), {
      files: specs.filter((s) => s.startsWith('.')).map((s) => relative(REPO_ROOT, resolve(dirname(f), s))),
      packages: specs.filter((s) => !s.startsWith('.')),
    });
  }
  return graph;
}

/** Strongly connected components with more than one file (Tarjan), each sorted. */
function circles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1) found.push(c.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

const graph = importGraph();

test('the circle finder finds a circle of three and a self-contained chain has none', () => {
  assert.equal(
    circles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
        ['d', ['a']],
      ]),
    ),
    [['a', 'b', 'c']],
  );
  assert.equal(
    circles(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    [],
  );
});

test('no import circles in api/, pipeline/ or common/', () => {
  assert.ok(graph.size > 200, `${graph.size} source files read`);
  const found = circles(new Map([...graph].map(([f, g]) => [f, g.files])));
  assert.equal(found, [], `import circles:\n${found.map((c) => c.join(' ↔ ')).join('\n')}`);
});

test('pipeline/ and api/ never import each other; common/ imports neither', () => {
  const wrong: string[] = [];
  for (const [f, g] of graph) {
    const side = f.split('/')[0];
    for (const t of g.files) {
      const to = t.split('/')[0];
      if (
        (side === 'api' && to === 'pipeline') ||
        (side === 'pipeline' && to === 'api') ||
        (side === 'common' && (to === 'api' || to === 'pipeline'))
      )
        wrong.push(`${f} → ${t}`);
    }
  }
  assert.equal(wrong, []);
});

test('the top of api/ holds at most 4 files (its entry points)', () => {
  const top = readdirSync(join(REPO_ROOT, 'api')).filter((e) => statSync(join(REPO_ROOT, 'api', e)).isFile());
  assert.ok(top.length <= 4, `api/ top: ${top.join(', ')}`);
});

test("one module per side imports DuckDB's client", () => {
  const importers = [...graph]
    .filter(([, g]) => g.packages.includes('@duckdb/node-api'))
    .map(([f]) => f)
    .sort();
  assert.equal(importers, ['api/duckdb/db.ts', 'pipeline/lib/duckdb.ts']);
});

test.run();
