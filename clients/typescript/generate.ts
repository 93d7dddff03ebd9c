// Runs openapi-typescript (pinned, in .tools/openapi-typescript: scripts/bootstrap.js) over an
// OpenAPI file and answers the TypeScript it generates. Used by `npm run openapi` to write
// schema.d.ts and by the test that checks the committed schema.d.ts is current.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLIENT_SCHEMA_FILE = join(__dirname, 'schema.d.ts');

const { OPENAPI_TYPESCRIPT_CLI } = require('../../scripts/bootstrap.js') as { OPENAPI_TYPESCRIPT_CLI: string };

export function generateClientSchema(openApiFile: string): string {
  if (!existsSync(OPENAPI_TYPESCRIPT_CLI)) throw new Error(`no openapi-typescript at ${OPENAPI_TYPESCRIPT_CLI}: run node scripts/bootstrap.js`);
  const dir = mkdtempSync(join(tmpdir(), 'openapi-typescript-'));
  try {
    const out = join(dir, 'schema.d.ts');
    execFileSync(process.execPath, [OPENAPI_TYPESCRIPT_CLI, openApiFile, '--output', out], { stdio: ['ignore', 'ignore', 'inherit'] });
    return readFileSync(out, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
