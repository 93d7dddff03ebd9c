// The dev stack's restart loop (scripts/lib/keep-running.ts) over real child processes: a
// process that exits by itself is started again and the exit is logged; one that cannot be
// started is tried again; stop() ends the current run and no restart follows.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { keepRunning, type Backoff, type Running } from '../../../scripts/lib/keep-running';
import { stopChild } from '../../../scripts/lib/temporal-dev-server';
import { createLogger } from '../../../core/logger';

const QUICK: Backoff = { firstMs: 10, maxMs: 50, stableAfterMs: 60_000 };

/** A node process that lives `lifeMs` (or until stopped), then exits with code 3. */
function nodeProcess(lifeMs: number): Running {
  const child = spawn(process.execPath, ['-e', `setTimeout(() => process.exit(3), ${lifeMs})`], { stdio: 'ignore' });
  const exited = new Promise<string>((done) =>
    child.once('exit', (code, signal) => done(signal ? `signal ${signal}` : `code ${code}`)),
  );
  return { exited, stop: () => stopChild(child, 5_000) };
}

function recordingLogger() {
  const lines: Array<{ msg: string; exit?: string }> = [];
  const logger = createLogger('silent');
  logger.error = ((obj: { exit?: string }, msg: string) =>
    lines.push({ msg, exit: obj.exit })) as unknown as typeof logger.error;
  return { logger, lines };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  assert.ok(check(), 'the condition never held');
}

describe('keepRunning (npm start supervision)', () => {
  it('starts a process again after it exits by itself, logging how it exited', async () => {
    const { logger, lines } = recordingLogger();
    const runs: Running[] = [];
    const start = async () => {
      const run = nodeProcess(runs.length < 2 ? 50 : 60_000);
      runs.push(run);
      return run;
    };
    const kept = keepRunning('demo', await start(), start, logger, QUICK);
    await until(() => kept.restarts === 2);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.exit]),
      [
        ['a service process exited; restarting it', 'code 3'],
        ['a service process exited; restarting it', 'code 3'],
      ],
    );
    await kept.stop();
    assert.equal(await runs[2].exited, 'signal SIGTERM');
    assert.equal(kept.restarts, 2, 'no restart after stop');
  });

  it('tries a start that failed again', async () => {
    const { logger, lines } = recordingLogger();
    let calls = 0;
    const start = async () => {
      calls += 1;
      if (calls < 3) throw new Error('port in use');
      return nodeProcess(60_000);
    };
    const kept = keepRunning('demo', nodeProcess(0), start, logger, QUICK);
    await until(() => kept.restarts === 1);
    assert.equal(calls, 3);
    assert.ok(lines.some((l) => l.exit === 'failed to start: port in use'));
    await kept.stop();
  });
});
