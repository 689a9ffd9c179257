/**
 * The MCP server (clients/mcp/) driven by the MCP SDK's own client over stdio, against a real
 * server on port 0: tools/list offers search_leads with the query parameters of GET /v1/leads,
 * a search_leads call's total equals /v1/leads's for the same filters, a commonwealth key sees no
 * enriched value through it, and a problem comes back as a tool error with its code.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startTestApi, type TestApi } from '../helpers/api.ts';
import { loaderArgs } from '../../api/startup/loader-args.ts';

const SERVER = join(import.meta.dirname, '..', '..', 'clients', 'mcp', 'src', 'server.ts');

let api: TestApi;
let doc: Record<string, any>;
const clients: Client[] = [];

/**
 * An MCP client connected over stdio to a fresh MCP server process holding `key` (with the test
 * process's loader flags: tsx under plain uvu, none in the test runner's workers, where Node
 * strips the types).
 */
async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'leads-test', version: '0.0.0' });
  const env = { ...(process.env as Record<string, string>), LEADS_API_KEY: key, LEADS_BASE_URL: `${api.baseUrl}/v1` };
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [...loaderArgs(), SERVER], env, stderr: 'inherit' }),
  );
  clients.push(client);
  return client;
}

/** A tool's JSON answer (its one text content). */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; body: any }> {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: { type: string; text: string }[];
  };
  return { isError: r.isError === true, body: JSON.parse(r.content[0]!.text) };
}

let ent: Client;
let cw: Client;
test.before(async () => {
  api = await startTestApi();
  doc = (await api.request('/v1/openapi.json')).body;
  [ent, cw] = await Promise.all([connect(api.keys.ent_api), connect(api.keys.commonwealth)]);
});
test.after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await api?.close();
});

test('tools/list: search_leads takes the query parameters of GET /v1/leads; the other tools are there', async () => {
  const { tools } = await ent.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ['search_leads', 'get_lead', 'list_authorities', 'market_intelligence', 'search_infrastructure'])
    assert.ok(names.includes(n), `${n} in ${names}`);
  assert.is(
    names.includes('changes_since'),
    Boolean(doc.paths['/events']?.get),
    'changes_since once /v1/events exists',
  );
  assert.is(
    names.includes('lead_history'),
    Boolean(doc.paths['/leads/{id}/history']?.get),
    'lead_history once the history exists',
  );
  const search = tools.find((t) => t.name === 'search_leads')!;
  const documented = doc.paths['/leads'].get.parameters
    .filter((p: any) => p.in === 'query' && p.name !== 'dry_run')
    .map((p: any) => p.name);
  assert.equal(Object.keys(search.inputSchema.properties ?? {}).sort(), [...documented].sort());
  assert.equal(
    (search.inputSchema.properties as any).vertical.items.enum,
    doc.paths['/leads'].get.parameters.find((p: any) => p.name === 'vertical').schema.items.enum,
  );
  assert.is(search.annotations?.readOnlyHint, true);
});

test('search_leads: the total equals /v1/leads for the same filters; get_lead reads one', async () => {
  const filters = { county: ['Cork', 'Dublin'], vertical: ['roofing', 'solar', 'insulation'], page_size: 5 };
  const r = await call(ent, 'search_leads', filters);
  assert.is(r.isError, false);
  const direct = await api.request('/v1/leads?county=Cork,Dublin&vertical=roofing,solar,insulation&page_size=5');
  assert.ok(direct.body.total > 0);
  assert.is(r.body.total, direct.body.total);
  assert.equal(
    r.body.results.map((l: any) => l.id),
    direct.body.results.map((l: any) => l.id),
  );
  const one = await call(ent, 'get_lead', { id: r.body.results[0].id });
  assert.is(one.body.id, r.body.results[0].id);
  const authorities = await call(ent, 'list_authorities', {});
  assert.ok(authorities.body.authorities.length > 0);
  const intel = await call(ent, 'market_intelligence', { section: 'yields' });
  assert.is(intel.isError, false, JSON.stringify(intel.body).slice(0, 300));
});

test('a commonwealth key through MCP sees no enriched value (search and detail); an enriched key does', async () => {
  const enriched = Object.entries<any>(doc.components.schemas.Lead.properties)
    .filter(([, s]) => s['x-enriched'])
    .map(([k]) => k);
  assert.ok(enriched.includes('applicant_org'));
  const open = await call(cw, 'search_leads', { page_size: 100 });
  const full = await call(ent, 'search_leads', { page_size: 100 });
  assert.is(open.body.total, full.body.total);
  const values = (body: any) =>
    body.results.flatMap((l: any) => enriched.map((f) => l[f])).filter((v: unknown) => v !== null);
  assert.equal(values(open.body), []);
  assert.ok(values(full.body).length > 0, 'the ent_api key sees enriched values (so the masking is what hides them)');
  const withOrg = full.body.results.find((l: any) => l.applicant_org !== null);
  const detail = await call(cw, 'get_lead', { id: withOrg.id });
  assert.equal(
    enriched.map((f) => detail.body[f]),
    enriched.map(() => null),
  );
  assert.ok(open.body._meta.masked.some((m: any) => m.field === 'applicant_org'));
  const intel = await call(cw, 'market_intelligence', { section: 'yields' });
  assert.equal(
    [intel.isError, intel.body.status, intel.body.code],
    [true, 403, 'insufficient_scope'],
    "the key's scope applies unchanged",
  );
});

test("a bad argument comes back as a tool error with the problem's code", async () => {
  const r = await call(ent, 'search_leads', { page_size: 0 });
  assert.equal(
    [r.isError, r.body.status, r.body.code, r.body.errors[0].name],
    [true, 400, 'invalid_parameter', 'page_size'],
  );
});

test.run();
