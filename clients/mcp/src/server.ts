#!/usr/bin/env node
/**
 * The leads MCP server over stdio. Environment: LEADS_API_KEY (your key: its scope, masking,
 * limits and budget apply to every tool call) and LEADS_BASE_URL (the API with `/v1`).
 *
 *   LEADS_API_KEY=lk_ea_… LEADS_BASE_URL=https://api.example.ie/v1 npx @irish-construction-leads/mcp
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { LeadsClient } from '../../typescript/src/index.ts';
import { createLeadsMcpServer } from './tools.ts';

const apiKey = process.env['LEADS_API_KEY'];
const baseUrl = process.env['LEADS_BASE_URL'];
if (!apiKey || !baseUrl) {
  process.stderr.write('leads-mcp: set LEADS_API_KEY and LEADS_BASE_URL (the API with /v1)\n');
  process.exit(2);
}
const client = new LeadsClient({ apiKey, baseUrl });
const doc = (await client.getAny<Record<string, any>>('/openapi.json')).data;
await createLeadsMcpServer(client, doc).connect(new StdioServerTransport());
