// WebhookDelivery on Temporal's time-skipping test server, with the default retry schedule
// (about 3 days) and with a configured one (WEBHOOK_RETRY_SCHEDULE) taken by the relay and by a
// replay: the durable timers skip, the attempts are real HTTP requests to a port where nothing
// listens, recorded in the real PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { createDb, type Db } from '../../prisma/client';
import { createIssuer } from '../../api/issuers/store';
import {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  webhookReplayWorkflowId,
  type WebhookDeliveryInput,
} from '../../workflows/webhook-delivery-contract';
import { loadConfig } from '../../core/config';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { replayWebhook } from '../../api/webhooks/replay';
import { testDatabaseUrl } from '../helpers/env';
import {
  deadUrl,
  deliveryOf,
  insertEndpoint,
  newWebhookRecord,
  outboxWebhook,
  startTestRelay,
  waitFor,
} from '../helpers/webhooks';
import { startInput, testActivityDeps, testEngine } from '../helpers/engine';
import { startTimeSkippingServer, workflowWorker } from '../helpers/time-skipping';

/** Not the default: three waits, written as an operator writes WEBHOOK_RETRY_SCHEDULE. */
const CONFIGURED_SCHEDULE_MS = loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1h,6h,2d' }).webhookRetryScheduleMs;

describe('WebhookDelivery on the time-skipping server', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let db: Db;

  before(async () => {
    env = await startTimeSkippingServer();
    db = createDb(testDatabaseUrl(), 5);
  });
  after(async () => {
    await env?.teardown();
    await db?.$disconnect();
  });

  /** An issuer whose endpoint never answers: every attempt fails. */
  async function issuerWithDeadEndpoint(): Promise<{ issuerId: string; endpointId: string }> {
    const now = new Date();
    const issuer = await createIssuer(db, { name: 'Time-skipping issuer', environment: 'sandbox' }, 'test', now);
    const endpointId = await insertEndpoint(db, issuer.id, await deadUrl(), {
      enabledTypes: ['qualified_auth', 'qualified_settlement'],
      createdAt: now,
    });
    return { issuerId: issuer.id, endpointId };
  }

  /** A worker of the real workflows and activities on a task queue of its own. */
  function workerFor(engine: WorkflowEngine): Promise<Worker> {
    return workflowWorker(env, engine, createActivities(testActivityDeps(db, engine)), db);
  }

  async function attemptsOf(webhookId: string) {
    const attempts = await db.webhookAttempt.findMany({ where: { webhookId }, orderBy: { attemptNumber: 'asc' } });
    assert.ok(
      attempts.every(
        (a) => a.outcome === 'failed' && a.statusCode === null && a.error!.startsWith('connection_error: '),
      ),
      attempts[0]?.error ?? 'no attempts',
    );
    return attempts.map((a) => a.attemptNumber);
  }

  it('ends failed after exactly the default schedule’s 11 attempts when the receiver is down throughout', async () => {
    const { issuerId, endpointId } = await issuerWithDeadEndpoint();
    const webhookId = await newWebhookRecord(db, issuerId);
    const taskQueue = `test-${randomUUID()}`;
    const worker = await workerFor(testEngine(env.client, taskQueue));
    const result = await worker.runUntil(
      env.client.workflow.execute(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
        workflowId: webhookDeliveryWorkflowId(webhookId, endpointId),
        taskQueue,
        args: [{ webhookId, endpointId } satisfies WebhookDeliveryInput],
      }),
    );
    const expected = DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS.length + 1;
    assert.equal(expected, 11);
    assert.deepEqual(result, { webhookId, status: 'failed', attempts: expected });
    assert.deepEqual(await attemptsOf(webhookId), numbers(1, expected));
    const row = await deliveryOf(db, webhookId, endpointId);
    assert.deepEqual(
      [row.status, row.attemptCount, row.nextAttemptAt, row.deliveredAt],
      ['failed', expected, null, null],
    );
  });

  it('ends failed after exactly 4 attempts with a configured schedule of 3 waits, having waited each of them', async () => {
    const { issuerId, endpointId } = await issuerWithDeadEndpoint();
    const webhookId = await newWebhookRecord(db, issuerId);
    const engine = testEngine(env.client, `test-${randomUUID()}`, { webhookRetryScheduleMs: CONFIGURED_SCHEDULE_MS });
    const worker = await workerFor(engine);
    const handle = await env.client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      workflowId: webhookDeliveryWorkflowId(webhookId, endpointId),
      taskQueue: engine.taskQueue,
      args: [
        {
          webhookId,
          endpointId,
          retryScheduleMs: engine.settings.webhookRetryScheduleMs,
        } satisfies WebhookDeliveryInput,
      ],
    });
    assert.deepEqual(await worker.runUntil(handle.result()), { webhookId, status: 'failed', attempts: 4 });
    assert.deepEqual(await attemptsOf(webhookId), numbers(1, 4));
    assert.deepEqual(await timersOf(handle), CONFIGURED_SCHEDULE_MS, 'the durable waits between the attempts');
    const row = await deliveryOf(db, webhookId, endpointId);
    assert.deepEqual([row.status, row.attemptCount], ['failed', 4]);
  });

  it('runs the configured schedule through the relay’s hand-over and again through a replay', async () => {
    const { issuerId, endpointId } = await issuerWithDeadEndpoint();
    const engine = testEngine(env.client, `test-${randomUUID()}`, { webhookRetryScheduleMs: CONFIGURED_SCHEDULE_MS });
    const relay = startTestRelay(db, engine);
    const worker = await workerFor(engine);
    try {
      await worker.runUntil(async () => {
        // Written as a lifecycle step writes it: the relay makes attempt 1, then hands over.
        const webhookId = await outboxWebhook(db, issuerId);
        const delivery = env.client.workflow.getHandle(webhookDeliveryWorkflowId(webhookId, endpointId));
        await waitFor('the delivery workflow', () =>
          delivery.describe().then(
            () => true,
            (err) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)),
          ),
        );
        const input = await startInput<WebhookDeliveryInput>(delivery);
        assert.deepEqual([input.endpointId, input.retryScheduleMs], [endpointId, CONFIGURED_SCHEDULE_MS]);
        assert.deepEqual(await delivery.result(), { webhookId, status: 'failed', attempts: 3 });
        assert.deepEqual(await timersOf(delivery), CONFIGURED_SCHEDULE_MS);
        assert.deepEqual(await attemptsOf(webhookId), numbers(1, 4), 'the relay’s attempt and the three retries');

        const webhook = await db.webhook.findUniqueOrThrow({ where: { id: webhookId } });
        const replay = await replayWebhook(db, engine, webhook, new Date());
        assert.deepEqual(
          [replay.endpointId, replay.firstAttemptNumber, replay.workflowId],
          [endpointId, 5, webhookReplayWorkflowId(webhookId, endpointId, 5)],
        );
        const replayRun = env.client.workflow.getHandle(replay.workflowId);
        assert.deepEqual((await startInput<WebhookDeliveryInput>(replayRun)).retryScheduleMs, CONFIGURED_SCHEDULE_MS);
        assert.deepEqual(await replayRun.result(), { webhookId, status: 'failed', attempts: 4 });
        assert.deepEqual(await timersOf(replayRun), CONFIGURED_SCHEDULE_MS);
        assert.deepEqual(await attemptsOf(webhookId), numbers(1, 8), 'the replay’s own four attempts, numbered on');
        const row = await deliveryOf(db, webhookId, endpointId);
        assert.deepEqual([row.status, row.attemptCount, row.relayedAt !== null], ['failed', 8, true]);
      });
    } finally {
      await relay.stop();
    }
  });
});

/** The waits a run took: its durable timers, as its history recorded them. */
async function timersOf(handle: WorkflowHandle): Promise<number[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => {
    const wait = e.timerStartedEventAttributes?.startToFireTimeout;
    return wait ? [Number(wait.seconds ?? 0) * 1000 + Math.round((wait.nanos ?? 0) / 1e6)] : [];
  });
}

/** from, from + 1, ..., to */
function numbers(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
