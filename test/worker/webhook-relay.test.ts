// The webhook relay (worker/webhook-relay.ts) on the real dev server and PostgreSQL: first
// attempts straight from the outbox, failing webhooks handed to their WebhookDelivery
// workflow, nothing sent twice after a relay died, several relays sharing one outbox, and
// one endpoint's hanging receiver not holding up another endpoint's webhooks.
import assert from 'node:assert/strict';
import { WorkflowNotFoundError } from '@temporalio/client';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, type TestIssuer } from '../helpers/app';
import {
  deliveryOf,
  insertEndpoint,
  outboxWebhook,
  startReceiver,
  startTestRelay,
  waitFor,
  waitForWebhookStatus,
  webhookLeftByDeadRelay,
  type Receiver,
} from '../helpers/webhooks';
import { webhookAttempts } from '../../core/metrics';
import { webhookDeliveryWorkflowId, type WebhookDeliveryInput } from '../../workflows/webhook-delivery-contract';
import { loadAttemptState } from '../../activities/webhooks/attempt-state';
import { PROBE_INTERVAL_MS, TRIP_AFTER_FAILURES } from '../../core/webhooks/endpoint-health';

const SCHEDULE = [200, 200];

describe('webhook relay', function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack({
      settings: { webhookRetryScheduleMs: SCHEDULE },
      relay: { perEndpoint: 2, concurrency: 4 },
    });
  });
  after(() => stack.stop());

  const webhookIdsAt = (r: Receiver) => r.requests.map((q) => q.headers['webhook-id']);

  async function issuerWithReceiver(
    answer?: Parameters<typeof startReceiver>[0],
  ): Promise<{ issuer: TestIssuer; endpointId: string; receiver: Receiver }> {
    const issuer = await newIssuer(stack.app);
    const receiver = await startReceiver(answer);
    const endpointId = await insertEndpoint(stack.db, issuer.id, receiver.url);
    return { issuer, endpointId, receiver };
  }

  it('delivers a first attempt from the outbox with no workflow at all', async () => {
    const { issuer, endpointId, receiver } = await issuerWithReceiver();
    try {
      const id = await outboxWebhook(stack.db, issuer.id);
      await waitForWebhookStatus(stack.db, id, ['delivered']);
      const row = await deliveryOf(stack.db, id, endpointId);
      assert.deepEqual(
        [row.status, row.attemptCount, Boolean(row.relayedAt), row.relayClaimedUntil],
        ['delivered', 1, true, null],
      );
      assert.deepEqual(webhookIdsAt(receiver), [id]);
      await assert.rejects(
        stack.client.workflow.getHandle(webhookDeliveryWorkflowId(id, endpointId)).describe(),
        WorkflowNotFoundError,
      );
    } finally {
      await receiver.close();
    }
  });

  it('hands a webhook whose first attempt failed to its WebhookDelivery workflow, which carries on with attempt 2', async () => {
    const { issuer, endpointId, receiver } = await issuerWithReceiver((n) => (n === 0 ? 503 : 204));
    const counted = async () =>
      (await webhookAttempts.get()).values.reduce<Record<string, number>>(
        (byOutcome, v) => ({
          ...byOutcome,
          [String(v.labels.outcome)]: (byOutcome[String(v.labels.outcome)] ?? 0) + v.value,
        }),
        {},
      );
    const countedBefore = await counted();
    try {
      const id = await outboxWebhook(stack.db, issuer.id);
      const handle = stack.client.workflow.getHandle(webhookDeliveryWorkflowId(id, endpointId));
      const result = await waitFor('the delivery workflow', async () =>
        handle.result().catch((err) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err))),
      );
      assert.deepEqual(result, { webhookId: id, status: 'delivered', attempts: 1 });
      const started = (await handle.fetchHistory()).events![0].workflowExecutionStartedEventAttributes!;
      const input = JSON.parse(Buffer.from(started.input!.payloads![0].data!).toString()) as WebhookDeliveryInput;
      assert.deepEqual(input, {
        webhookId: id,
        endpointId,
        retryScheduleMs: SCHEDULE,
        resumeAfterAttempt: 1,
        firstAttemptNumber: 2,
      });
      const attempts = await stack.db.webhookAttempt.findMany({
        where: { webhookId: id },
        orderBy: { attemptNumber: 'asc' },
      });
      assert.deepEqual(
        attempts.map((a) => [a.endpointId, a.attemptNumber, a.outcome, a.statusCode, a.errorClass]),
        [
          [endpointId, 1, 'failed', 503, 'http_status'],
          [endpointId, 2, 'succeeded', 204, null],
        ],
      );
      assert.deepEqual(webhookIdsAt(receiver), [id, id]);
      const row = await deliveryOf(stack.db, id, endpointId);
      assert.deepEqual([row.status, row.attemptCount, Boolean(row.relayedAt)], ['delivered', 2, true]);
      // rewards_webhook_attempts_total counts each recorded attempt once, by type and outcome (docs/operating/runbook.md, "Health, metrics, logs").
      const countedAfter = await counted();
      const delta = (outcome: string) => (countedAfter[outcome] ?? 0) - (countedBefore[outcome] ?? 0);
      // The counter is the process's: other deliveries of the suite may be counted meanwhile, so
      // this webhook's two attempts are a lower bound (its rows above are exact).
      assert.ok(delta('failed') >= 1 && delta('succeeded') >= 1, JSON.stringify(countedAfter));
    } finally {
      await receiver.close();
    }
  });

  it('does not send again a first attempt recorded before its relay died', async () => {
    const { issuer, endpointId, receiver } = await issuerWithReceiver();
    const relay2 = startTestRelay(stack.db, stack.engine);
    try {
      // The dead relay's state: attempt 1 recorded as failed, the row claimed until just now.
      const claim = { claimedUntil: new Date(Date.now() + 1_500), attemptCount: 1 };
      const id = await webhookLeftByDeadRelay(stack.db, issuer.id, endpointId, claim, (tx, webhookId) =>
        tx.webhookAttempt.create({
          data: {
            id: `${webhookId}/${endpointId}/attempt/1`,
            webhookId,
            endpointId,
            attemptNumber: 1,
            startedAt: new Date(),
            statusCode: 500,
            latencyMs: 3,
            outcome: 'failed',
            errorClass: 'http_status',
            error: 'http_status: receiver answered 500',
          },
        }),
      );
      const row = await waitForWebhookStatus(stack.db, id, ['delivered']);
      assert.equal(row.attemptCount, 2);
      assert.equal((await deliveryOf(stack.db, id, endpointId)).attemptCount, 2);
      assert.deepEqual(webhookIdsAt(receiver), [id], 'only attempt 2 reached the receiver');
    } finally {
      await relay2.stop();
      await receiver.close();
    }
  });

  it('shares one outbox between relays: 120 webhooks, each sent exactly once', async () => {
    const { issuer, endpointId, receiver } = await issuerWithReceiver();
    const others = [1, 2].map(() => startTestRelay(stack.db, stack.engine, {}, { perEndpoint: 4, concurrency: 8 }));
    try {
      const ids = await Promise.all(Array.from({ length: 120 }, () => outboxWebhook(stack.db, issuer.id)));
      await waitFor('every webhook relayed', async () =>
        (await stack.db.webhookDelivery.count({ where: { webhookId: { in: ids }, relayedAt: null } })) === 0
          ? true
          : undefined,
      );
      assert.equal(
        await stack.db.webhookDelivery.count({
          where: { webhookId: { in: ids }, endpointId, status: 'delivered', attemptCount: 1 },
        }),
        120,
      );
      assert.deepEqual([...webhookIdsAt(receiver)].sort(), [...ids].sort());
    } finally {
      await Promise.all(others.map((r) => r.stop()));
      await receiver.close();
    }
  });

  it('sends a tripped endpoint no new first attempt until an attempt to it succeeds', async () => {
    const { issuer, endpointId, receiver } = await issuerWithReceiver(() => 'hang');
    const relay = startTestRelay(
      stack.db,
      stack.engine,
      { webhookAttemptTimeoutMs: 300 },
      { perEndpoint: 2, concurrency: 8 },
    );
    const ids: string[] = [];
    /** Webhooks as a lifecycle step writes them: claimed for its relay, handed to it after the commit. */
    const written = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const webhookId = await outboxWebhook(stack.db, issuer.id);
        await stack.db.webhookDelivery.update({
          where: { webhookId_endpointId: { webhookId, endpointId } },
          data: { relayClaimedUntil: new Date(Date.now() + relay.claimMs), status: 'delivering' },
        });
        const state = (await loadAttemptState(stack.db, { webhookId, endpointId, attemptNumber: 1 }))!;
        relay.take({
          webhookId,
          endpointId,
          issuerId: issuer.id,
          sourceEventId: webhookId,
          type: 'qualified_settlement',
          attemptNumber: 1,
          state,
        });
        ids.push(webhookId);
      }
    };
    const firstAttempts = () => new Set(webhookIdsAt(receiver)).size;
    const failures = async () =>
      (await stack.db.webhookEndpoint.findUniqueOrThrow({ where: { id: endpointId } })).consecutiveFailures;
    try {
      // Two at a time into the hang, the rest held by the relay behind them.
      await written(20);
      await waitFor('the endpoint tripped', async () => ((await failures()) >= TRIP_AFTER_FAILURES ? true : undefined));
      // Attempts that were out when it tripped have ended (each within its 300 ms time-out).
      await new Promise((r) => setTimeout(r, 600));
      const atTrip = firstAttempts();
      // Deliveries held before the trip, and new ones, wait in the table: nothing new is sent.
      await written(5);
      await new Promise((r) => setTimeout(r, 2_000));
      assert.equal(firstAttempts(), atTrip, 'no new first attempt to a tripped endpoint');
      assert.ok(atTrip < 20, `the relay held deliveries back: ${atTrip} of 20 were sent`);

      // The receiver is back; the next probe (due once the last failure is 30 s old) succeeds.
      receiver.answer = () => 204;
      await stack.db.webhookEndpoint.update({
        where: { id: endpointId },
        data: { lastFailureAt: new Date(Date.now() - PROBE_INTERVAL_MS - 1_000) },
      });
      for (const id of ids) await waitForWebhookStatus(stack.db, id, ['delivered']);
      assert.equal(firstAttempts(), ids.length, 'every held delivery went out once the endpoint answered');
    } finally {
      await relay.stop();
      await receiver.close();
    }
  });

  it('keeps delivering other endpoints’ webhooks while one endpoint’s receiver hangs', async () => {
    const slow = await issuerWithReceiver(() => 'hang');
    const fast = await issuerWithReceiver();
    try {
      const slowIds = await Promise.all(Array.from({ length: 6 }, () => outboxWebhook(stack.db, slow.issuer.id)));
      await waitFor('the slow receiver holding its share', async () =>
        slow.receiver.requests.length >= 2 ? true : undefined,
      );
      const id = await outboxWebhook(stack.db, fast.issuer.id);
      await waitForWebhookStatus(stack.db, id, ['delivered']);
      // The stack's relay allows 2 attempts in flight per endpoint, of 4 in all.
      assert.equal(slow.receiver.requests.length, 2, 'the hanging endpoint holds no more than its share');
      assert.equal(
        await stack.db.webhookDelivery.count({ where: { webhookId: { in: slowIds }, status: 'delivered' } }),
        0,
      );
    } finally {
      await slow.receiver.close();
      await fast.receiver.close();
    }
  });
});
