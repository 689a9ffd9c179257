#!/usr/bin/env node
// The operators' one CLI (`npx leads …`). A thin shim: it lets Node load the TypeScript
// sources directly (tsx) and hands the arguments to the command table in pipeline/cli.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../pipeline/cli.ts');
process.exitCode = await main(process.argv.slice(2));
