// Runs openapi-typescript (pinned, in .tools/openapi-typescript: scripts/bootstrap.js) over an
// OpenAPI file and answers the TypeScript it generates. Used by `npm run openapi` to write
// schema.ts and by the test that checks the committed schema.ts is current. The types go to a
// .ts file, not the usual .d.ts: the project compiles with skipLibCheck, which would leave a
// declaration file unchecked.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CLIENT_SCHEMA_FILE = join(__dirname, 'schema.ts');

const { OPENAPI_TYPESCRIPT_CLI } = require('../../scripts/bootstrap.js') as { OPENAPI_TYPESCRIPT_CLI: string };

export function generateClientSchema(openApiFile: string): string {
  if (!existsSync(OPENAPI_TYPESCRIPT_CLI))
    throw new Error(`no openapi-typescript at ${OPENAPI_TYPESCRIPT_CLI}: run node scripts/bootstrap.js`);
  const dir = mkdtempSync(join(tmpdir(), 'openapi-typescript-'));
  try {
    const out = join(dir, 'schema.ts');
    // A field with a default may be left out of a request: without this flag openapi-typescript
    // makes it required in request bodies (`status` of a group, a card...).
    execFileSync(
      process.execPath,
      [OPENAPI_TYPESCRIPT_CLI, openApiFile, '--output', out, '--default-non-nullable=false'],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    return readFileSync(out, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
