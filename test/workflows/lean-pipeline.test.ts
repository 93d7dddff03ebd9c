// The lean pipeline (docs/decisions/0001-lean-transaction-pipeline.md): what a purchase costs Temporal,
// counted from its real history, and a run that began on the code before the change, which
// the new code must replay and finish in its own shape (workflows/lifecycle-steps-v1.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { WorkflowNotFoundError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { startStack, type Stack } from '../helpers/stack';
import { startTestApp, type TestIssuer } from '../helpers/app';
import { authEvent, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { deliveryOf, insertEndpoint, startReceiver, waitForWebhookStatus, type Receiver } from '../helpers/webhooks';
import { testTemporalAddress, testWebhookDestinations, testWebhookSecretKeys } from '../helpers/env';
import { testEngine } from '../helpers/engine';
import { createActivities } from '../../activities';
import { createWorker } from '../../worker/worker';
import { createLogger } from '../../core/logger';
import { costOfHistory } from '../../bench/billable-actions';
import { replayHistories } from '../../scripts/lib/replay';
import { LIFECYCLE_WORKFLOW_TYPE } from '../../workflows/lifecycle-signals';
import { webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';

const V1_WORKFLOWS = require.resolve('./fixtures/v1');
const eventTypes = (history: any) => history.events.map((e: any) => e.eventType.replace('EVENT_TYPE_', ''));

describe('lean transaction pipeline', function () {
  this.timeout(120_000);
  let stack: Stack;
  let receiver: Receiver;
  let issuer: TestIssuer;
  let endpointId: string;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack();
    receiver = await startReceiver();
    ({ issuer, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 500 } }));
    endpointId = await insertEndpoint(stack.db, issuer.id, receiver.url);
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  const stored = (kind: 'auth' | 'settled', externalId: string) => storedEvent(stack.db, issuer.id, kind, externalId);
  const historyOf = async (workflowId: string) => {
    const handle = stack.client.workflow.getHandle(workflowId);
    await handle.result();
    return JSON.parse(historyToJSON(await handle.fetchHistory()));
  };
  const noWorkflow = (workflowId: string) =>
    assert.rejects(
      stack.client.workflow.getHandle(workflowId).describe(),
      WorkflowNotFoundError,
      `${workflowId} should not exist`,
    );

  it('settles a purchase in one workflow task: 3 billable actions, the webhook from the outbox', async () => {
    const event = settledEvent(card, { amount: 4_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await stored('settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, ['matched', 'not_matched', 'unknown']), 'matched');
    const history = await historyOf(row.workflowId);
    assert.deepEqual(costOfHistory(history), {
      actions: 3,
      events: 8,
      byRule: { 'workflow started': 1, 'local activities (per workflow task)': 1, 'search attribute upsert': 1 },
    });
    assert.deepEqual(eventTypes(history), [
      'WORKFLOW_EXECUTION_STARTED',
      'WORKFLOW_EXECUTION_SIGNALED',
      'WORKFLOW_TASK_SCHEDULED',
      'WORKFLOW_TASK_STARTED',
      'WORKFLOW_TASK_COMPLETED',
      'MARKER_RECORDED',
      'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
      'WORKFLOW_EXECUTION_COMPLETED',
    ]);
    const webhook = await stack.db.webhook.findFirstOrThrow({ where: { sourceEventId: row.id } });
    const delivered = await waitForWebhookStatus(stack.db, webhook.id, ['delivered']);
    assert.equal(delivered.attemptCount, 1);
    assert.ok(delivered.relayedAt, 'the relay is done with the row');
    const delivery = await deliveryOf(stack.db, webhook.id, endpointId);
    assert.deepEqual([delivery.status, delivery.attemptCount], ['delivered', 1], 'its one delivery, to the endpoint');
    await noWorkflow(webhookDeliveryWorkflowId(webhook.id, endpointId));
    assert.equal(await stack.db.ledgerTransfer.count({ where: { transactionId: row.id } }), 1);
  });

  it('previews then settles an authorized purchase for 7 billable actions (timer and settlement signal included)', async () => {
    const auth = authEvent(card, { amount: 6_000, merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-auth', auth);
    const authRow = await stored('auth', auth.id);
    assert.equal(await stack.waitForStatus(authRow.id, ['previewed', 'not_matched', 'unknown']), 'previewed');
    const settled = settledEvent(card, { amount: 6_000, merchantId: merchant.id, authorizationId: auth.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    const txn = await stored('settled', settled.id);
    assert.equal(await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']), 'matched');
    const history = await historyOf(authRow.workflowId);
    const cost = costOfHistory(history);
    // Two-thirds of the 9 the quality bar allows: the start, two workflow tasks of local
    // activities, two outcome upserts, the settlement timer and the settlement's signal.
    assert.equal(cost.actions, 7, JSON.stringify(cost));
    assert.deepEqual(cost.byRule, {
      'workflow started': 1,
      'local activities (per workflow task)': 2,
      'search attribute upsert': 2,
      'timer started': 1,
      signal: 1,
    });
    assert.ok(!eventTypes(history).includes('ACTIVITY_TASK_SCHEDULED'), 'no regular activity on the happy path');
  });

  it('finishes a run that previewed on the old code in the old shape, after the upgrade, and replays it', async () => {
    // The events are stored by an app without a hand-over: this test drives the workflow.
    const quiet = await startTestApp({ db: stack.db });
    const auth = authEvent(card, { amount: 8_000, merchantId: merchant.id });
    const settled = settledEvent(card, { amount: 8_000, merchantId: merchant.id, authorizationId: auth.id });
    await quiet.request('POST', '/api/v1/incoming-auth', { token: issuer.token, body: auth });
    await quiet.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: settled });
    await quiet.close();
    const authRow = await stored('auth', auth.id);
    const txn = await stored('settled', settled.id);

    const taskQueue = `upgrade-${randomUUID()}`;
    const connection = await NativeConnection.connect({ address: testTemporalAddress() });
    const deps = {
      db: stack.db,
      logger: createLogger('silent'),
      clock: { now: () => new Date() },
      temporal: testEngine(stack.client, taskQueue),
      webhookDestinations: testWebhookDestinations,
      webhookSecretKeys: testWebhookSecretKeys,
    };
    try {
      const oldWorker = await Worker.create({
        connection,
        taskQueue,
        workflowsPath: V1_WORKFLOWS,
        activities: createActivities(deps),
      });
      const handle = await oldWorker.runUntil(async () => {
        // As the old hand-over started runs: an input without `shape`.
        const h = await stack.client.workflow.signalWithStart(LIFECYCLE_WORKFLOW_TYPE, {
          workflowId: authRow.workflowId,
          taskQueue,
          args: [{ issuerId: issuer.id }],
          signal: 'authorization',
          signalArgs: [{ eventId: authRow.id }],
        });
        await stack.waitForStatus(authRow.id, ['previewed']);
        // Wait until the old code has scheduled its settlement timer: the run now waits.
        for (
          let i = 0;
          i < 100 && !eventTypes(JSON.parse(historyToJSON(await h.fetchHistory()))).includes('TIMER_STARTED');
          i++
        )
          await new Promise((r) => setTimeout(r, 100));
        return h;
      });

      const newWorker = await createWorker({ connection, namespace: 'default', taskQueue, deps });
      const summary: any = await newWorker.runUntil(async () => {
        await handle.signal('settlement', { eventId: txn.id });
        return handle.result();
      });
      assert.deepEqual(
        summary.steps.map((s: any) => [s.signal, s.status]),
        [
          ['authorization', 'previewed'],
          ['settlement', 'matched'],
        ],
      );

      const types = eventTypes(JSON.parse(historyToJSON(await handle.fetchHistory())));
      assert.ok(types.includes('TIMER_CANCELED'), 'the settlement arrived while the old run waited');
      assert.equal(
        types.filter((t: string) => t === 'ACTIVITY_TASK_SCHEDULED').length,
        4,
        'v1 steps throughout: preview, delivery start, settle, delivery start',
      );
      assert.ok(!types.includes('MARKER_RECORDED'), 'no local activity in a v1 run');
      const [outcome] = await replayHistories([
        { workflowId: handle.workflowId, history: await handle.fetchHistory() },
      ]);
      assert.deepEqual(outcome, { workflowId: handle.workflowId, ok: true, error: undefined });
    } finally {
      await connection.close();
    }
    assert.equal((await stored('settled', settled.id)).rewardStatus, 'matched');
    const webhook = await stack.db.webhook.findFirstOrThrow({ where: { sourceEventId: txn.id } });
    assert.equal(
      (await waitForWebhookStatus(stack.db, webhook.id, ['delivered'])).attemptCount,
      1,
      'the relay delivered the v1 step’s webhook',
    );
  });
});
