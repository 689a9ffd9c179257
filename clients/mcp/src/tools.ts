/**
 * The MCP tools of the leads API, each one GET of the public API with the user's own key (so
 * scopes, masking, rate limits and row budgets apply unchanged), their inputs derived from the
 * served OpenAPI document: `search_leads` takes exactly the query parameters of `GET /leads` (the
 * filter table), and a tool whose operation the server does not have yet is not offered.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { LeadsProblem, type LeadsClient } from '../../typescript/src/index.ts';

type Json = Record<string, any>;
type Shape = Record<string, z.ZodType>;

/** The paging, caching and quote parameters no assistant should set: the tools answer one page of data. */
const NOT_FOR_TOOLS = new Set(['dry_run', 'If-None-Match']);

/** A zod type for one OpenAPI parameter schema (arrays: the values of a comma-separated list). */
function zodOf(schema: Json): z.ZodType {
  if (schema.type === 'array') return z.array(zodOf(schema.items ?? { type: 'string' }) as z.ZodType<string | number>);
  if (Array.isArray(schema.enum) && schema.enum.every((v: unknown) => typeof v === 'string'))
    return z.enum(schema.enum as [string, ...string[]]);
  if (schema.type === 'integer') return z.number().int();
  if (schema.type === 'number') return z.number();
  if (schema.type === 'boolean') return z.boolean();
  return z.string();
}

/** The input shape of the GET operation at `path`: its query (and path) parameters, all as documented. */
export function inputShape(doc: Json, path: string, omit: readonly string[] = []): Shape {
  const shape: Shape = {};
  for (const p of doc.paths[path].get.parameters ?? []) {
    if ((p.in !== 'query' && p.in !== 'path') || NOT_FOR_TOOLS.has(p.name) || omit.includes(p.name)) continue;
    const t = zodOf(p.schema ?? {}).describe(p.description ?? p.name);
    shape[p.name] = p.required ? t : t.optional();
  }
  return shape;
}

const hasGet = (doc: Json, path: string): boolean => Boolean(doc.paths?.[path]?.get);

/** A tool's answer: the API's JSON as text, or the problem (status, code, detail) as an error. */
async function answer(
  call: () => Promise<{ data: unknown }>,
): Promise<{ content: { type: 'text'; text: string }[]; isError?: boolean }> {
  try {
    return { content: [{ type: 'text', text: JSON.stringify((await call()).data) }] };
  } catch (e) {
    if (!(e instanceof LeadsProblem)) throw e;
    return {
      isError: true,
      content: [
        { type: 'text', text: JSON.stringify({ status: e.status, code: e.code, detail: e.detail, errors: e.errors }) },
      ],
    };
  }
}

/** `path` with its `{name}` parameters taken out of `args`, and the rest as the query. */
function split(path: string, args: Json): [string, Json] {
  const query = { ...args };
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = query[name];
    delete query[name];
    return encodeURIComponent(String(v));
  });
  return [filled, query];
}

interface ToolDef {
  name: string;
  path: string;
  title: string;
  description: string;
}

/** The tools, in the order tools/list shows them; each is offered when the server has its operation. */
export const TOOLS: readonly ToolDef[] = [
  {
    name: 'search_leads',
    path: '/leads',
    title: 'Search construction leads',
    description:
      'Search and filter Irish construction leads (planning applications and commencement notices). Filters combine with AND; several values of one filter mean OR. Answers one page: total, results, next_cursor (pass it as cursor with the same filters for the next page).',
  },
  {
    name: 'get_lead',
    path: '/leads/{id}',
    title: 'Read one lead',
    description: 'One lead with its detail sections (filings, company, neighbours), by its numeric id.',
  },
  {
    name: 'lead_history',
    path: '/leads/{id}/history',
    title: 'History of a lead',
    description: 'What changed on one lead, release by release.',
  },
  {
    name: 'changes_since',
    path: '/events',
    title: 'What changed since',
    description: 'The feed of changes (new and changed leads) since a point in time or a cursor.',
  },
  {
    name: 'list_authorities',
    path: '/authorities',
    title: 'Planning authorities',
    description: "The planning authorities covered, with the freshness of each one's data.",
  },
  {
    name: 'search_infrastructure',
    path: '/infrastructure',
    title: 'Search infrastructure projects',
    description: 'Energy and infrastructure projects (renewables, grid, data centres) with their filters.',
  },
  {
    name: 'market_intelligence',
    path: '/intel/analytics',
    title: 'Market intelligence',
    description:
      'Market analyses by section: price_index (repeat-sale house price index), yields (gross rental yields), emerging_zones (counties ranked by momentum), material_costs (building-material price indices). Enriched scopes only.',
  },
];

/**
 * An MCP server whose tools call the API with `client` (the user's key), described by `doc` (the
 * server's own `/v1/openapi.json`).
 */
export function createLeadsMcpServer(client: LeadsClient, doc: Json, version = '0.1.0'): McpServer {
  const server = new McpServer({ name: 'irish-construction-leads', version });
  for (const t of TOOLS) {
    if (!hasGet(doc, t.path)) continue;
    server.registerTool(
      t.name,
      {
        title: t.title,
        description: t.description,
        inputSchema: inputShape(doc, t.path),
        annotations: { readOnlyHint: true, openWorldHint: true },
      },
      (args: Json) => answer(() => client.getAny(...split(t.path, args))),
    );
  }
  return server;
}
