// Embedded PostgreSQL from a clone where the `postgres` user cannot reach:
// as root, PostgreSQL runs as `postgres`, and a clone under a 0700 directory (a root home)
// hides both its binaries (node_modules) and its data (.data) from that user.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePrivateClone, type PrivateClone } from '../../helpers/private-clone';
import { freePort } from '../../helpers/ports';

// Runs in the clone, as `npm start` would: data in .data/postgres, kept across a restart.
const DRIVER = `
import pg from 'pg';
import { startEmbeddedPostgres } from './scripts/lib/embedded-postgres';

async function query(url: string, sql: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

async function main() {
  const [dataDir, port] = process.argv.slice(2);
  const first = await startEmbeddedPostgres({ dataDir, port: Number(port), persistent: true });
  await first.createDatabase('rewards');
  await query(first.databaseUrl('rewards'), "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('across restarts')");
  await first.stop();
  // Not persistent the second time: its stop removes the cluster, wherever it was kept.
  const second = await startEmbeddedPostgres({ dataDir, port: Number(port), persistent: false });
  const rows = await query(second.databaseUrl('rewards'), 'SELECT v FROM kept');
  await second.stop();
  console.log(JSON.stringify({ rows }));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
`;

describe('scripts/lib/embedded-postgres', function () {
  this.timeout(180_000);

  describe('from a clone under a 0700 directory, run as root', () => {
    let clone: PrivateClone | undefined;
    after(() => clone?.remove());

    it('initialises, starts, restarts with its data and stops', async function () {
      if (process.getuid?.() !== 0) {
        // Only root drops to another user for PostgreSQL; CI runs as root.
        console.warn('skipping: the 0700-clone test needs root (PostgreSQL then runs as the postgres user)');
        this.skip();
      }
      clone = makePrivateClone();
      writeFileSync(join(clone.dir, 'private-clone-driver.ts'), DRIVER);
      const started = performance.now();
      const result = await run(clone.dir, [join(clone.dir, '.data', 'postgres'), String(await freePort())]);
      assert.equal(result.code, 0, `the driver failed:\n${result.stderr}`);
      assert.deepEqual(JSON.parse(result.stdout.trim().split('\n').at(-1)!), { rows: [{ v: 'across restarts' }] });
      assert.doesNotMatch(result.stderr, /EACCES/);
      // Nothing of the user's was opened up to get there.
      assert.equal(statSync(clone.privateDir).mode & 0o777, 0o700);
      console.log(`      (two starts from the private clone in ${Math.round(performance.now() - started)} ms)`);
    });
  });
});

function run(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'private-clone-driver.ts', ...args],
      { cwd, timeout: 150_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}
