// Recorded histories of every workflow type (test/workflows/histories, written by
// `npm run record-histories`) replay against the current workflow code. A workflow change
// that breaks them needs a patched() guard, not a new recording.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadHistoryDir, replayHistories } from '../../scripts/lib/replay';
import { quietTemporalRuntime } from '../helpers/stack';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTracing } from '../../core/tracing';

const ROOT = join(__dirname, '..', '..');
const HISTORIES = join(__dirname, 'histories');
const run = promisify(execFile);

/** A copy of workflows/ inside the project (so imports resolve) with an incompatible change. */
function incompatibleCopy(): { entry: string; cleanup(): void } {
  const dir = mkdtempSync(join(ROOT, '.replay-candidate-'));
  cpSync(join(ROOT, 'workflows'), join(dir, 'workflows'), { recursive: true });
  cpSync(join(ROOT, 'activities'), join(dir, 'activities'), { recursive: true });
  cpSync(join(ROOT, 'core'), join(dir, 'core'), { recursive: true }); // core/failure-types.ts
  const file = join(dir, 'workflows', 'transaction-lifecycle.ts');
  // A timer before the first step: a new command where history has another.
  const original = readFileSync(file, 'utf8');
  const withTimer = original.replace(
    'const record = newLifecycleRecord();',
    'const record = newLifecycleRecord();\n  await sleep(1);',
  );
  // Whatever else the file imports from the SDK, sleep joins it.
  const changed = withTimer.replace(
    /import \{ ([^}]*) \} from '@temporalio\/workflow';/,
    "import { $1, sleep } from '@temporalio/workflow';",
  );
  assert.notEqual(withTimer, original, 'the timer is planted');
  assert.notEqual(changed, withTimer, 'sleep is imported');
  writeFileSync(file, changed);
  return { entry: join(dir, 'workflows', 'index.ts'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A copy of workflows/ whose clockAdvanced handler takes the signal without asking patched():
 * what the sandbox clock would be without its guard. A run on the code before the sandbox clock
 * dropped the signal, so this copy commands a new timer where that history has none.
 */
function unguardedClockCopy(): { entry: string; cleanup(): void } {
  const dir = mkdtempSync(join(ROOT, '.replay-candidate-'));
  cpSync(join(ROOT, 'workflows'), join(dir, 'workflows'), { recursive: true });
  cpSync(join(ROOT, 'activities'), join(dir, 'activities'), { recursive: true });
  cpSync(join(ROOT, 'core'), join(dir, 'core'), { recursive: true }); // core/failure-types.ts
  const file = join(dir, 'workflows', 'sandbox-clock.ts');
  const original = readFileSync(file, 'utf8');
  const changed = original.replace(
    'if (!patched(SANDBOX_CLOCK_PATCH)) return;',
    'if (!SANDBOX_CLOCK_PATCH || !patched) return;',
  );
  assert.notEqual(changed, original, 'the guard is removed');
  writeFileSync(file, changed);
  return { entry: join(dir, 'workflows', 'index.ts'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A copy of workflows/ whose claim decisions take turns without asking patched(): what the claim
 * workflow would be without its guard. A run on the code before it, where two decisions arrived
 * together, scheduled resolveClaim twice; this copy schedules it once.
 */
function unguardedClaimCopy(): { entry: string; cleanup(): void } {
  const dir = mkdtempSync(join(ROOT, '.replay-candidate-'));
  cpSync(join(ROOT, 'workflows'), join(dir, 'workflows'), { recursive: true });
  cpSync(join(ROOT, 'activities'), join(dir, 'activities'), { recursive: true });
  cpSync(join(ROOT, 'core'), join(dir, 'core'), { recursive: true }); // core/failure-types.ts
  const file = join(dir, 'workflows', 'claim-resolution.ts');
  const original = readFileSync(file, 'utf8');
  const changed = original.replace(
    'const inTurn = patched(ONE_DECISION_AT_A_TIME_PATCH);',
    'const inTurn = Boolean(ONE_DECISION_AT_A_TIME_PATCH && patched);',
  );
  assert.notEqual(changed, original, 'the guard is removed');
  writeFileSync(file, changed);
  return { entry: join(dir, 'workflows', 'index.ts'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

describe('workflow replay of recorded histories', function () {
  this.timeout(180_000);
  const histories = loadHistoryDir(HISTORIES);
  before(() => quietTemporalRuntime());

  it('has recorded histories of every workflow type', () => {
    const types = new Set(
      histories.map((h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name),
    );
    assert.deepEqual([...types].sort(), [
      'claimResolution',
      'enrolmentRun',
      'expireGrants',
      'handoverSweeper',
      'payoutRun',
      'statementRun',
      'transactionLifecycle',
      'webhookDelivery',
      'webhookRetention',
    ]);
    assert.ok(histories.length >= 9);
  });

  it('replays every history against the current code', async () => {
    const outcomes = await replayHistories(histories);
    assert.deepEqual(
      outcomes.filter((o) => !o.ok),
      [],
    );
    assert.equal(outcomes.length, histories.length);
  });

  it('replays every history with the tracing interceptors installed, as a worker that traces runs them', async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = startTracing('rewards-replay', { processor: new SimpleSpanProcessor(exporter) });
    try {
      const outcomes = await replayHistories(histories, undefined, tracing);
      assert.deepEqual(
        outcomes.filter((o) => !o.ok),
        [],
      );
      assert.equal(outcomes.length, histories.length);
    } finally {
      await tracing.shutdown();
    }
  });

  it('fails `npm run replay` on an incompatible change and passes on the real code', async () => {
    const candidate = incompatibleCopy();
    try {
      const broken = await replayAgainst(candidate.entry);
      assert.equal(broken.code, 1);
      assert.match(broken.stdout, /DIVERGED {2}lifecycle-auth-settle/);
      assert.match(broken.stdout, /DIVERGED {2}v1-lifecycle-auth-settle/);
      assert.match(broken.stdout, /Nondeterminism|DeterminismViolation/i);
    } finally {
      candidate.cleanup();
    }
    const real = await run(process.execPath, ['--import', 'tsx', 'scripts/replay.ts', '--dir', HISTORIES], {
      cwd: ROOT,
    });
    assert.match(real.stdout, new RegExp(`${histories.length} replayed, 0 diverged`));
  });

  it('keeps a run that took clockAdvanced on the code before the sandbox clock replaying (patched), and would not without it', async () => {
    const names = histories.map((h) => h.workflowId);
    assert.ok(
      names.includes('pre-sandbox-clock-signal-then-settle-after-upgrade'),
      'the run from before the sandbox clock is recorded',
    );
    assert.ok(
      names.includes('lifecycle-sandbox-clock-lapse'),
      'a run whose wait the sandbox clock shortened is recorded',
    );
    const candidate = unguardedClockCopy();
    try {
      const broken = await replayAgainst(candidate.entry);
      assert.equal(broken.code, 1);
      assert.match(broken.stdout, /DIVERGED {2}pre-sandbox-clock-signal-then-settle-after-upgrade/);
    } finally {
      candidate.cleanup();
    }
  });

  it('keeps a claim run where two decisions arrived together on the code before turns replaying (patched), and would not without it', async () => {
    assert.ok(
      histories.some((h) => h.workflowId === 'pre-one-decision-claim-race'),
      'the run from before decisions took turns is recorded',
    );
    const candidate = unguardedClaimCopy();
    try {
      const broken = await replayAgainst(candidate.entry);
      assert.equal(broken.code, 1);
      assert.match(broken.stdout, /DIVERGED {2}pre-one-decision-claim-race/);
      assert.doesNotMatch(broken.stdout, /DIVERGED {2}claim-approved/);
    } finally {
      candidate.cleanup();
    }
  });
});

/** `npm run replay` of every recorded history against other workflow code: its exit code and output. */
function replayAgainst(workflowsEntry: string): Promise<{ code: number; stdout: string }> {
  return run(
    process.execPath,
    ['--import', 'tsx', 'scripts/replay.ts', '--dir', HISTORIES, '--workflows', workflowsEntry],
    {
      cwd: ROOT,
    },
  ).then(
    () => ({ code: 0, stdout: '' }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
}
