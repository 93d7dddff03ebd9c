// WebhookDelivery with the DEFAULT retry schedule (about 3 days) on Temporal's
// time-skipping test server: the durable timers skip, the attempts are real HTTP requests
// to a port where nothing listens, recorded in the real PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { WORKFLOWS_PATH } from '../../worker/worker';
import { createLogger } from '../../core/logger';
import { createDb, type Db } from '../../prisma/client';
import { createIssuer } from '../../api/admin/issuers';
import { generateSigningSecret } from '../../core/webhooks/signing';
import { findTestServer } from '../../scripts/lib/temporal-dev-server';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS, WEBHOOK_DELIVERY_WORKFLOW_TYPE, webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';
import { testDatabaseUrl, testWebhookDestinations } from '../helpers/env';
import { deadUrl, newWebhookRecord } from '../helpers/webhooks';
import { quietTemporalRuntime } from '../helpers/stack';

describe('WebhookDelivery on the time-skipping server', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let db: Db;

  before(async () => {
    quietTemporalRuntime();
    env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: findTestServer() } } });
    db = createDb(testDatabaseUrl(), 5);
  });
  after(async () => {
    await env?.teardown();
    await db?.$disconnect();
  });

  it('ends failed after exactly the default schedule’s 11 attempts when the receiver is down throughout', async () => {
    const now = new Date();
    const issuer = await createIssuer(db, { name: 'Time-skipping issuer', environment: 'sandbox' }, 'test', now);
    await db.webhookEndpoint.create({
      data: { issuerId: issuer.id, url: await deadUrl(), enabledTypes: ['qualified_auth', 'qualified_settlement'], secret: generateSigningSecret(), createdAt: now, updatedAt: now },
    });
    const webhookId = await newWebhookRecord(db, issuer.id);
    const taskQueue = `test-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: WORKFLOWS_PATH,
      activities: createActivities({ db, logger: createLogger('silent'), clock: { now: () => new Date() }, temporal: { client: env.client, taskQueue }, webhookDestinations: testWebhookDestinations }),
    });
    const result = await worker.runUntil(
      env.client.workflow.execute(WEBHOOK_DELIVERY_WORKFLOW_TYPE, { workflowId: webhookDeliveryWorkflowId(webhookId), taskQueue, args: [{ webhookId }] }),
    );
    const expected = DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS.length + 1;
    assert.equal(expected, 11);
    assert.deepEqual(result, { webhookId, status: 'failed', attempts: expected });
    const attempts = await db.webhookAttempt.findMany({ where: { webhookId }, orderBy: { attemptNumber: 'asc' } });
    assert.deepEqual(attempts.map((a) => a.attemptNumber), Array.from({ length: expected }, (_, i) => i + 1));
    assert.ok(attempts.every((a) => a.outcome === 'failed' && a.statusCode === null && a.error!.startsWith('connection_error: ')), attempts[0].error!);
    const row = await db.webhook.findUniqueOrThrow({ where: { id: webhookId } });
    assert.deepEqual([row.status, row.attemptCount, row.nextAttemptAt, row.deliveredAt], ['failed', expected, null, null]);
  });
});
