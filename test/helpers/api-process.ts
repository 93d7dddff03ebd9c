// The real API process (api/server.ts) over the run's PostgreSQL and Temporal, for tests that
// need what only the process does: read its environment, or die at a chosen moment.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { OPERATOR_TOKEN } from './app';
import { TEST_WEBHOOK_SECRET_KEYS, testDatabaseUrl, testTemporalAddress } from './env';

const ROOT = join(__dirname, '..', '..');

/** `env` adds to (or overrides) the test's connection settings. */
export function spawnApi(
  port: number,
  taskQueue: string,
  env: Record<string, string> = {},
  stdio: 'ignore' | 'pipe' = 'ignore',
): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'api', 'server.ts')], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: testDatabaseUrl(),
      TEMPORAL_ADDRESS: testTemporalAddress(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      // One process, so that SIGKILL kills all of the API at once.
      API_PROCESSES: '1',
      OPERATOR_TOKEN,
      WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      // No load balancer to wait for: SIGTERM stops it at once unless a test says otherwise.
      SHUTDOWN_DRAIN_DELAY: '0s',
      ...env,
    },
    stdio,
  });
}

export async function waitForReady(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 240; i++) {
    assert.equal(child.exitCode, null, 'the API process exited');
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail('the API process did not become ready');
}
