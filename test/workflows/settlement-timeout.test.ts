// The settlement time-out on the time-skipping test server: the real workflow, activities and
// hand-over, with days skipped rather than shortened. The stack is configured with 3 days, not
// the default 10, so each test shows that the configured value is the one a purchase waits.
import assert from 'node:assert/strict';
import type { WorkflowHandle } from '@temporalio/client';
import { startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { startTimeSkipping, type TimeSkippingWorker } from '../helpers/time-skipping';
import { assertLedgerHealthy } from '../helpers/ledger';
import { startInput } from '../helpers/engine';
import { waitFor } from '../helpers/webhooks';
import { handOver, signalFor } from '../../core/domain/handover';
import type { EventKind } from '../../api/ingestion/schemas';
import {
  DEFAULT_SETTLEMENT_TIMEOUT_MS,
  LIFECYCLE_SHAPE,
  LIFECYCLE_WORKFLOW_TYPE,
  type LifecycleInput,
} from '../../workflows/lifecycle-signals';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const CONFIGURED_TIMEOUT_MS = 3 * DAY_MS;

describe('TransactionLifecycle settlement time-out (time-skipping)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let issuer: TestIssuer;
  let ts: TimeSkippingWorker;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    app = await startTestApp();
    ({ issuer, card, merchant } = await purchaseScenario(app));
    ts = await startTimeSkipping(app.db, { settings: { settlementTimeoutMs: CONFIGURED_TIMEOUT_MS } });
  });
  after(async () => {
    await ts?.teardown();
    await app.close();
  });

  /** Stored by the API, which has no hand-over here: the test hands it over itself. */
  async function ingest(path: string, event: any, kind: EventKind) {
    assert.equal((await issuer.call('POST', path, event)).status, 204);
    return storedEvent(app.db, issuer.id, kind, event.id);
  }

  /** The API's and the sweeper's hand-over, with the stack's configured settings. */
  async function handOverEvent(row: Awaited<ReturnType<typeof ingest>>): Promise<WorkflowHandle> {
    const item = {
      eventId: row.id,
      issuerId: row.issuerId,
      chgId: row.chgId,
      externalId: row.externalId,
      workflowId: row.workflowId,
      signal: signalFor(row.kind as EventKind, row.state),
    };
    const result = await handOver({ temporal: ts.engine, db: app.db }, [item]);
    assert.deepEqual(result, { handedOver: [row.id], failed: [] });
    return ts.env.client.workflow.getHandle(row.workflowId);
  }

  /** Time skips only once the run waits on its settlement timer, so the wait starts at day 0. */
  const settlementTimerStarted = (handle: WorkflowHandle) =>
    waitFor(
      'the settlement timer',
      async () => ((await handle.fetchHistory()).events ?? []).some((e) => e.timerStartedEventAttributes) || undefined,
    );

  const stillWaiting = async (handle: WorkflowHandle, authId: string) => {
    assert.equal((await handle.describe()).status.name, 'RUNNING');
    assert.equal((await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: authId } })).rewardStatus, 'previewed');
  };

  /**
   * Skips to an hour before `timeoutMs` (still waiting), then to an hour after it (lapsed). Time
   * moves only by these sleeps: awaiting a result would let the server skip on by itself.
   */
  async function assertLapsesAt(handle: WorkflowHandle, authId: string, timeoutMs: number) {
    await settlementTimerStarted(handle);
    await ts.env.sleep(timeoutMs - HOUR_MS);
    await stillWaiting(handle, authId);
    await ts.env.sleep(2 * HOUR_MS);
    await waitFor(
      'the lapse',
      async () =>
        (await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: authId } })).rewardStatus === 'lapsed' ||
        undefined,
    );
    const summary: any = await handle.result();
    assert.deepEqual(
      summary.steps.map((s: any) => s.status),
      ['previewed', 'lapsed'],
    );
  }

  it('starts the run with the configured time-out and lapses the preview after it, not before', async () => {
    const auth = await ingest('/api/v1/incoming-auth', authEvent(card, { merchantId: merchant.id }), 'auth');
    await ts.withWorker(async () => {
      const handle = await handOverEvent(auth);
      assert.equal((await startInput<LifecycleInput>(handle)).settlementTimeoutMs, CONFIGURED_TIMEOUT_MS);
      await assertLapsesAt(handle, auth.id, CONFIGURED_TIMEOUT_MS);
    });
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('settles normally when the settlement arrives an hour before the configured time-out', async () => {
    const authBody = authEvent(card, { merchantId: merchant.id, amount: 4_000 });
    const auth = await ingest('/api/v1/incoming-auth', authBody, 'auth');
    const settled = await ingest(
      '/api/v1/incoming-txn',
      settledEvent(card, { merchantId: merchant.id, amount: 4_000, authorizationId: authBody.id }),
      'settled',
    );
    await ts.withWorker(async () => {
      const handle = await handOverEvent(auth);
      await settlementTimerStarted(handle);
      await ts.env.sleep(CONFIGURED_TIMEOUT_MS - HOUR_MS);
      await handOverEvent(settled);
      const summary: any = await handle.result();
      assert.deepEqual(
        summary.steps.map((s: any) => s.status),
        ['previewed', 'matched'],
      );
    });
    assert.equal((await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: settled.id } })).rewardStatus, 'matched');
    assert.equal((await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: auth.id } })).rewardStatus, 'previewed');
    // The money, not only the status: 5% of 4,000 posted once, against the settlement.
    const posted = await app.db.ledgerTransfer.findMany({ where: { transactionId: { in: [settled.id, auth.id] } } });
    assert.deepEqual(
      posted.map((t) => [t.transactionId, t.kind, t.amountMinor]),
      [[settled.id, 'earn_cashback', 200n]],
    );
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('keeps the 10-day default for a run started before the time-out was configurable (no value in its input)', async () => {
    const auth = await ingest('/api/v1/incoming-auth', authEvent(card, { merchantId: merchant.id }), 'auth');
    await ts.withWorker(async () => {
      const input: LifecycleInput = { issuerId: issuer.id, shape: LIFECYCLE_SHAPE };
      const handle = await ts.env.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
        workflowId: auth.workflowId,
        taskQueue: ts.taskQueue,
        args: [input],
        signal: 'authorization',
        signalArgs: [{ eventId: auth.id }],
      });
      await assertLapsesAt(handle, auth.id, DEFAULT_SETTLEMENT_TIMEOUT_MS);
    });
    await assertLedgerHealthy(app.db, issuer.id);
  });
});
