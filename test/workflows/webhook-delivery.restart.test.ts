// A delivery survives its worker: the worker stops while the delivery waits between
// attempts (a durable timer on the Temporal server), a new worker on the same task queue
// picks the workflow up, and the delivery completes without extra attempts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { createWorker } from '../../worker/worker';
import { WEBHOOK_DELIVERY_WORKFLOW_TYPE, webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';
import { newIssuer, startTestApp, type TestApp } from '../helpers/app';
import { testTemporalAddress } from '../helpers/env';
import { quietTemporalRuntime } from '../helpers/stack';
import {
  deliveryOf,
  insertEndpoint,
  newWebhookRecord,
  startReceiver,
  waitFor,
  waitForWebhookStatus,
  type Receiver,
} from '../helpers/webhooks';
import { testActivityDeps, testEngine } from '../helpers/engine';

describe('WebhookDelivery across a worker restart', function () {
  this.timeout(120_000);
  let app: TestApp;
  let receiver: Receiver;
  let clientConnection: Connection;
  let workerConnection: NativeConnection;
  let client: Client;
  const taskQueue = `test-${randomUUID()}`;

  before(async () => {
    quietTemporalRuntime();
    app = await startTestApp();
    receiver = await startReceiver();
    clientConnection = await Connection.connect({ address: testTemporalAddress() });
    client = new Client({ connection: clientConnection });
    workerConnection = await NativeConnection.connect({ address: testTemporalAddress() });
  });
  after(async () => {
    await receiver.close();
    await workerConnection.close();
    await clientConnection.close();
    await app.close();
  });

  const startWorker = async (): Promise<{ worker: Worker; running: Promise<void> }> => {
    const worker = await createWorker({
      connection: workerConnection,
      namespace: 'default',
      taskQueue,
      deps: testActivityDeps(app.db, testEngine(client, taskQueue)),
    });
    return { worker, running: worker.run() };
  };

  it('completes after the worker is replaced while the delivery waits for its next attempt', async () => {
    const issuer = await newIssuer(app);
    const endpointId = await insertEndpoint(app.db, issuer.id, receiver.url);
    receiver.answer = (n) => (n === 0 ? 503 : 204);
    const webhookId = await newWebhookRecord(app.db, issuer.id);

    const first = await startWorker();
    const handle = await client.workflow.start(WEBHOOK_DELIVERY_WORKFLOW_TYPE, {
      workflowId: webhookDeliveryWorkflowId(webhookId, endpointId),
      taskQueue,
      args: [{ webhookId, endpointId, retryScheduleMs: [3_000, 3_000] }],
    });
    // The first attempt failed and its retry is scheduled: the delivery waits on its timer.
    await waitFor('the first failed attempt', async () => {
      const row = await deliveryOf(app.db, webhookId, endpointId);
      return row.attemptCount === 1 && row.nextAttemptAt ? row : undefined;
    });
    first.worker.shutdown();
    await first.running;

    const second = await startWorker();
    try {
      assert.deepEqual(await handle.result(), { webhookId, status: 'delivered', attempts: 2 });
    } finally {
      second.worker.shutdown();
      await second.running;
    }
    await waitForWebhookStatus(app.db, webhookId, ['delivered']);
    const attempts = await app.db.webhookAttempt.findMany({ where: { webhookId }, orderBy: { attemptNumber: 'asc' } });
    assert.deepEqual(
      attempts.map((a) => [a.endpointId, a.attemptNumber, a.outcome]),
      [
        [endpointId, 1, 'failed'],
        [endpointId, 2, 'succeeded'],
      ],
    );
    const delivery = await deliveryOf(app.db, webhookId, endpointId);
    assert.deepEqual([delivery.status, delivery.attemptCount, delivery.nextAttemptAt], ['delivered', 2, null]);
    assert.equal(receiver.requests.length, 2, 'nothing was sent twice');
  });
});
