import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startEmbeddedPostgres } from '../scripts/lib/embedded-postgres';
import { freePort } from '../test/helpers/ports';
import { migrate } from '../prisma/migrate';
(async () => {
  const h = await startEmbeddedPostgres({ dataDir: join(mkdtempSync(join(tmpdir(), 'repo-pg15-')), 'pg'), port: await freePort(), persistent: false, binDir: '/usr/lib/postgresql/15/bin' });
  await h.createDatabase('rewards');
  try { const r = await migrate(h.databaseUrl('rewards')); console.log('applied', r.applied.length); }
  catch (e) { console.log('FAILED', e); }
  await h.stop();
})();
