// `npm start` and the sandbox data: into its embedded database by default, into an external
// DATABASE_URL only when SEED_SANDBOX=true says so; unset, it refuses in one line before it
// starts anything.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sandboxSeeding } from '../../scripts/lib/first-run';

const ROOT = join(__dirname, '..', '..');

describe('scripts/start (npm start) and the sandbox data', () => {
  it('seeds its embedded database unless SEED_SANDBOX=false', () => {
    assert.deepEqual(sandboxSeeding({}), { seed: true });
    assert.deepEqual(sandboxSeeding({ seedSandbox: false }), { seed: false });
  });

  it('seeds an external database only with SEED_SANDBOX=true, and starts without seeding with false', () => {
    const databaseUrl = 'postgresql://rewards@db.example:5432/rewards';
    assert.deepEqual(sandboxSeeding({ databaseUrl, seedSandbox: true }), { seed: true });
    assert.deepEqual(sandboxSeeding({ databaseUrl, seedSandbox: false }), { seed: false });
    assert.ok('refusal' in sandboxSeeding({ databaseUrl }));
  });

  it('refuses an external DATABASE_URL without SEED_SANDBOX in one line, before starting anything', function () {
    this.timeout(30_000);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME };
    // Nothing listens there: a stack that went on would fail differently, and later.
    env.DATABASE_URL = 'postgresql://rewards@127.0.0.1:1/rewards';
    env.DATA_DIR = join(ROOT, 'test-output', 'start-refusal-never-created');
    const run = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts')], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 25_000,
    });
    assert.equal(run.status, 1, run.stderr);
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0], /^npm start: DATABASE_URL names an external database.* only with SEED_SANDBOX=true/);
    assert.equal(run.stdout, '');
    assert.equal(existsSync(env.DATA_DIR), false, 'nothing was prepared');
  });
});
