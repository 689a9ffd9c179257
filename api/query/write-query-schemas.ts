/**
 * Regenerate the query schemas that are derived from code: `schemas/leads-query.schema.json`
 * from the lead filter table (api/query/lead-filters.ts) and `schemas/export-query.schema.json`
 * (a reference to each of those filters, api/query/export-query.ts). test/api/query/lead-filters.test.ts
 * fails when the checked-in file differs from what this writes.
 *
 *   node --import tsx api/query/write-query-schemas.ts
 */
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { leadsQueryJsonSchema } from './lead-filters.ts';
import { exportQueryJsonSchema } from './export-query.ts';
import { eventsQueryJsonSchema } from './events-query.ts';

/** The generated schema files: path (relative to the repository) → file text. */
export function generatedQuerySchemas(): Record<string, string> {
  const text = (schema: unknown): string => `${JSON.stringify(schema, null, 2)}\n`;
  return {
    'schemas/leads-query.schema.json': text(leadsQueryJsonSchema()),
    'schemas/export-query.schema.json': text(exportQueryJsonSchema()),
    'schemas/events-query.schema.json': text(eventsQueryJsonSchema()),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [path, text] of Object.entries(generatedQuerySchemas())) {
    writeFileSync(new URL(`../../${path}`, import.meta.url), text);
    console.log(`wrote ${path}`);
  }
}
