/**
 * The human-readable pages of the problem types (`GET /v1/problems`, `GET /v1/problems/{code}`),
 * rendered from the one problem table (api/http/problems.ts). Plain HTML, no script, the reference's
 * style sheet; links are relative, so the pages work behind a path-prefixing proxy.
 */
import { PROBLEM_CODES, PROBLEM_TYPES, type ProblemCode } from '../http/problems.ts';
import { escapeHtml as esc, markdown } from './reference-html.ts';

/** A problem type as the JSON of its page. */
export interface ProblemDoc {
  code: ProblemCode;
  type: string;
  status: number;
  title: string;
  description: string;
  action: string;
}

/** The JSON of one code's page: the table's entry with its `type` URI. */
export function problemDoc(code: ProblemCode, typeUri: (code: ProblemCode) => string): ProblemDoc {
  const p = PROBLEM_TYPES[code];
  return { code, type: typeUri(code), status: p.status, title: p.title, description: p.description, action: p.action };
}

const page = (title: string, css: string, body: string): string => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${esc(title)}</title>
  <link rel="stylesheet" href="${css}">
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;

/** The page of one problem type (at /v1/problems/{code}). */
export function problemPage(doc: ProblemDoc): string {
  return page(
    `${doc.title} (${doc.code}) — problem type`,
    '../docs/assets/reference.css',
    `<p><a href="../problems">All problem types</a></p>
<h1>${esc(doc.title)}</h1>
<dl>
  <dt>code</dt><dd><code>${esc(doc.code)}</code></dd>
  <dt>HTTP status</dt><dd>${doc.status}</dd>
  <dt>type</dt><dd><code>${esc(doc.type)}</code></dd>
</dl>
<h2>What happened</h2>
${markdown(doc.description)}
<h2>What to do</h2>
${markdown(doc.action)}
<p>Every error of this API is an RFC 9457 <code>application/problem+json</code> body whose <code>type</code> is the address of a page like this one; quote its <code>request_id</code> when you report a problem.</p>`,
  );
}

/** The index of every problem type (at /v1/problems). */
export function problemsIndexPage(docs: readonly ProblemDoc[]): string {
  const rows = docs
    .map(
      (d) =>
        `  <tr><td>${d.status}</td><td><a href="problems/${esc(d.code)}"><code>${esc(d.code)}</code></a></td><td>${esc(d.title)}</td></tr>`,
    )
    .join('\n');
  return page(
    'Problem types — Irish Construction Leads API',
    'docs/assets/reference.css',
    `<h1>Problem types</h1>
<p>Every error of this API is an RFC 9457 <code>application/problem+json</code> body with a stable <code>code</code>; its <code>type</code> is the address of the code's page below. The same list as JSON: <code>Accept: application/json</code>.</p>
<table>
  <thead><tr><th>Status</th><th>code</th><th>Title</th></tr></thead>
  <tbody>
${rows}
  </tbody>
</table>`,
  );
}

/** Every code's page JSON, in the table's order. */
export function problemDocs(typeUri: (code: ProblemCode) => string): ProblemDoc[] {
  return PROBLEM_CODES.map((c) => problemDoc(c, typeUri));
}
