// WebhookDelivery on the real Temporal dev server with the real worker and PostgreSQL,
// delivering to a real receiver on 127.0.0.1. Short retry schedules come through the
// workflow input; the default schedule is covered by the time-skipping test.
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, type TestIssuer } from '../helpers/app';
import {
  deliveryOf,
  insertEndpoint,
  newWebhookRecord,
  startReceiver,
  storedSecrets,
  waitForWebhookStatus,
  webhookState,
  type Receiver,
} from '../helpers/webhooks';
import {
  WEBHOOK_DELIVERY_WORKFLOW_TYPE,
  webhookDeliveryWorkflowId,
  type WebhookDeliveryInput,
  type WebhookDeliveryResult,
} from '../../workflows/webhook-delivery-contract';

describe('WebhookDelivery workflow', function () {
  this.timeout(120_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let receiver: Receiver;
  let secret: string;
  let endpointId: string;

  before(async () => {
    stack = await startStack();
    issuer = await newIssuer(stack.app);
    receiver = await startReceiver();
    endpointId = await insertEndpoint(stack.db, issuer.id, receiver.url);
    secret = (await storedSecrets(stack.db, issuer.id)).secret;
  });
  beforeEach(() => {
    receiver.requests.length = 0;
    receiver.answer = () => 204;
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });

  /** A delivery run; one that names no endpoint runs as those started before endpoints had ids (webhook/<evt>). */
  const deliver = (input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> =>
    stack.client.workflow.execute(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      workflowId:
        input.endpointId === undefined
          ? `webhook/${input.webhookId}`
          : webhookDeliveryWorkflowId(input.webhookId, input.endpointId),
      taskQueue: stack.taskQueue,
      args: [input],
    });
  const attemptsOf = (webhookId: string) =>
    stack.db.webhookAttempt.findMany({ where: { webhookId }, orderBy: { attemptNumber: 'asc' } });

  it('delivers on the first try with a signature standardwebhooks verifies', async () => {
    const webhookId = await newWebhookRecord(stack.db, issuer.id);
    assert.deepEqual(await deliver({ webhookId, endpointId }), { webhookId, status: 'delivered', attempts: 1 });
    assert.equal(receiver.requests.length, 1);
    const { headers, body } = receiver.requests[0];
    const verified = new Webhook(secret).verify(body, headers as Record<string, string>) as any;
    assert.equal(verified.webhookId, webhookId);
    assert.equal(verified.type, 'qualified_settlement');
    assert.equal(headers['webhook-id'], webhookId);
    const row = await deliveryOf(stack.db, webhookId, endpointId);
    assert.deepEqual([row.status, row.attemptCount, row.nextAttemptAt], ['delivered', 1, null]);
    assert.ok(row.deliveredAt);
    assert.equal((await webhookState(stack.db, webhookId)).status, 'delivered');
    const [attempt] = await attemptsOf(webhookId);
    assert.deepEqual(
      [attempt.id, attempt.endpointId, attempt.outcome, attempt.statusCode, attempt.error],
      [`${webhookId}/${endpointId}/attempt/1`, endpointId, 'succeeded', 204, null],
    );
  });

  it('retries after three failures and delivers on the fourth attempt, same webhookId and body each time', async () => {
    receiver.answer = (n) => (n < 3 ? 503 : 200);
    const webhookId = await newWebhookRecord(stack.db, issuer.id);
    const result = await deliver({ webhookId, endpointId, retryScheduleMs: [100, 100, 100, 100, 100] });
    assert.deepEqual(result, { webhookId, status: 'delivered', attempts: 4 });
    assert.equal(receiver.requests.length, 4);
    assert.deepEqual(new Set(receiver.requests.map((r) => r.headers['webhook-id'])), new Set([webhookId]));
    assert.equal(new Set(receiver.requests.map((r) => r.body)).size, 1, 'the body is byte-identical on every retry');
    const attempts = await attemptsOf(webhookId);
    assert.deepEqual(
      attempts.map((a) => [a.attemptNumber, a.outcome, a.statusCode]),
      [
        [1, 'failed', 503],
        [2, 'failed', 503],
        [3, 'failed', 503],
        [4, 'succeeded', 200],
      ],
    );
    assert.match(attempts[0].error!, /^http_status: /);
    assert.equal((await deliveryOf(stack.db, webhookId, endpointId)).attemptCount, 4);
  });

  it('times out an attempt whose receiver hangs (10 s) and retries it', async () => {
    receiver.answer = (n) => (n === 0 ? 'hang' : 204);
    const webhookId = await newWebhookRecord(stack.db, issuer.id);
    assert.equal((await deliver({ webhookId, endpointId, retryScheduleMs: [100] })).status, 'delivered');
    const attempts = await attemptsOf(webhookId);
    assert.deepEqual(
      attempts.map((a) => [a.outcome, a.statusCode]),
      [
        ['failed', null],
        ['succeeded', 204],
      ],
    );
    assert.match(attempts[0].error!, /^timeout: no response within 10000 ms/);
    assert.ok(attempts[0].latencyMs >= 9_000, `latency ${attempts[0].latencyMs}`);
  });

  it('fails after the last attempt of the schedule, then a replay delivers it with the same webhookId', async () => {
    receiver.answer = () => 500;
    const webhookId = await newWebhookRecord(stack.db, issuer.id);
    assert.deepEqual(await deliver({ webhookId, endpointId, retryScheduleMs: [100] }), {
      webhookId,
      status: 'failed',
      attempts: 2,
    });
    assert.equal((await deliveryOf(stack.db, webhookId, endpointId)).status, 'failed');
    assert.equal((await webhookState(stack.db, webhookId)).status, 'failed');

    receiver.answer = () => 204;
    const replay = await issuer.call('POST', `/api/v2/webhooks/${webhookId}/replay`);
    assert.equal(replay.status, 202, replay.text);
    assert.deepEqual(replay.body, {
      webhookId,
      endpointId,
      firstAttemptNumber: 3,
      deliveries: [{ endpointId, firstAttemptNumber: 3 }],
    });
    const row = await waitForWebhookStatus(stack.db, webhookId, ['delivered']);
    assert.equal(row.attemptCount, 3);
    assert.equal((await deliveryOf(stack.db, webhookId, endpointId)).attemptCount, 3);
    assert.equal(receiver.requests.length, 3);
    assert.deepEqual(new Set(receiver.requests.map((r) => r.headers['webhook-id'])), new Set([webhookId]));
    assert.equal(new Set(receiver.requests.map((r) => r.body)).size, 1, 'a replay sends the same body');
    const detail = (await issuer.call('GET', `/api/v2/webhooks/${webhookId}`)).body;
    assert.deepEqual(
      detail.attempts.map((a: any) => [a.endpointId, a.attemptNumber, a.outcome, a.statusCode, a.errorClass]),
      [
        [endpointId, 1, 'failed', 500, 'http_status'],
        [endpointId, 2, 'failed', 500, 'http_status'],
        [endpointId, 3, 'succeeded', 204, null],
      ],
    );
    assert.deepEqual(
      detail.deliveries.map((d: any) => [d.endpointId, d.status, d.attemptCount, d.attempts.length]),
      [[endpointId, 'delivered', 3, 3]],
    );
  });

  it('delivers a run that names no endpoint (started before endpoints had ids) to the issuer’s first endpoint', async () => {
    const webhookId = await newWebhookRecord(stack.db, issuer.id);
    assert.deepEqual(await deliver({ webhookId }), { webhookId, status: 'delivered', attempts: 1 });
    assert.equal(receiver.requests.length, 1);
    const [attempt] = await attemptsOf(webhookId);
    assert.deepEqual(
      [attempt.id, attempt.endpointId, attempt.outcome],
      [`${webhookId}/attempt/1`, endpointId, 'succeeded'],
      'the attempt keeps its old id and belongs to the first endpoint’s delivery',
    );
    const row = await deliveryOf(stack.db, webhookId, endpointId);
    assert.deepEqual([row.status, row.attemptCount], ['delivered', 1]);
  });

  it('does nothing when a delivered webhook is started again', async () => {
    const webhookId = await newWebhookRecord(stack.db, issuer.id);
    await deliver({ webhookId, endpointId });
    const again = await stack.client.workflow.execute(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      workflowId: `${webhookDeliveryWorkflowId(webhookId, endpointId)}/again`,
      taskQueue: stack.taskQueue,
      args: [{ webhookId, endpointId, firstAttemptNumber: 2 } satisfies WebhookDeliveryInput],
    });
    assert.deepEqual(again, { webhookId, status: 'already_delivered', attempts: 0 });
    assert.equal(receiver.requests.length, 1);
  });

  it('fails at once, with the reason recorded, when the type is not enabled', async () => {
    const other = await newIssuer(stack.app);
    const otherEndpointId = await insertEndpoint(stack.db, other.id, receiver.url, {
      enabledTypes: ['qualified_auth'],
    });
    const webhookId = await newWebhookRecord(stack.db, other.id, 'qualified_settlement');
    assert.deepEqual(await deliver({ webhookId, endpointId: otherEndpointId }), {
      webhookId,
      status: 'failed',
      attempts: 1,
    });
    const [attempt] = await attemptsOf(webhookId);
    assert.match(attempt.error!, /^type_not_enabled: /);
    assert.equal(attempt.endpointId, otherEndpointId);
    assert.equal(receiver.requests.length, 0);
  });

  it('fails at once when the issuer has no endpoint (a run started before endpoints had ids)', async () => {
    const other = await newIssuer(stack.app);
    const webhookId = await newWebhookRecord(stack.db, other.id);
    assert.equal((await deliver({ webhookId })).status, 'failed');
    const [attempt] = await attemptsOf(webhookId);
    assert.match(attempt.error!, /^not_configured: /);
    assert.deepEqual([attempt.id, attempt.endpointId], [`${webhookId}/attempt/1`, null]);
  });
});
