// `npm run openapi`: writes the committed API description and the client types generated from
// it, after a change to routes or schemas:
// 1. openapi.json at the root: what a server with the default configuration serves at /openapi.json;
// 2. clients/typescript/schema.ts: openapi-typescript's types of that file (installed apart
//    by scripts/bootstrap.js into .tools/openapi-typescript: it needs TypeScript 5's JS API).
// test/api/openapi-published.test.ts and test/clients/typescript.e2e.test.ts fail when either is stale.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { defaultOpenApi, OPENAPI_FILE, serializeOpenApi } from '../api/openapi-published';
import { CLIENT_SCHEMA_FILE, generateClientSchema } from '../clients/typescript/generate';

const { ensureOpenApiTypescript } = require('./bootstrap.js') as { ensureOpenApiTypescript(): void };

function main(): void {
  writeFileSync(OPENAPI_FILE, serializeOpenApi(defaultOpenApi()));
  console.log(`[openapi] wrote ${relative(process.cwd(), OPENAPI_FILE)}`);
  ensureOpenApiTypescript();
  writeFileSync(CLIENT_SCHEMA_FILE, generateClientSchema(OPENAPI_FILE));
  console.log(`[openapi] wrote ${relative(process.cwd(), CLIENT_SCHEMA_FILE)}`);
}

main();
