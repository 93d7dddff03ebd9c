// The WebhookRetention workflow as its hourly schedule runs it (every issuer, no issuer named), on
// the real worker, Temporal and a database of its own (a run over every issuer must not reach the
// other files' webhooks): two issuers, one at the default 30 days and one the operator set to 7
// through the API; the webhooks past each one's retention with every delivery ended go, in bounded
// batches, and the issuer's API no longer finds them; the rest stay; a second run deletes nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer } from '../helpers/app';
import { freshDatabase } from '../helpers/databases';
import { agedWebhook, insertEndpoint } from '../helpers/webhooks';
import { migrate } from '../../prisma/migrate';
import {
  WEBHOOK_RETENTION_WORKFLOW_TYPE,
  type WebhookRetentionInput,
  type WebhookRetentionResult,
} from '../../workflows/webhook-retention-contract';

describe('WebhookRetention workflow (every issuer, each by its own retention)', function () {
  this.timeout(120_000);
  let stack: Stack;
  before(async () => {
    const url = await freshDatabase('webhook_retention');
    await migrate(url);
    stack = await startStack({ database: { url } });
  });
  after(() => stack?.stop());

  const run = (input: WebhookRetentionInput): Promise<WebhookRetentionResult> =>
    stack.client.workflow.execute(WEBHOOK_RETENTION_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: `webhook-retention-test-${randomUUID()}`,
      args: [input],
    });

  it('deletes the finished webhooks past each issuer’s retention, batch by batch, and only those', async () => {
    const now = new Date();
    const standard = await newIssuer(stack.app);
    const short = await newIssuer(stack.app);
    const patched = await stack.app.operator('PATCH', `/admin/v1/issuers/${short.id}`, { webhookRetentionDays: 7 });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.webhookRetentionDays, 7);
    const [s, t] = [
      await insertEndpoint(stack.db, standard.id, 'https://hooks.example.com/s'),
      await insertEndpoint(stack.db, short.id, 'https://hooks.example.com/t'),
    ];
    const gone = [
      await agedWebhook(stack.db, standard.id, now, 31, [{ endpointId: s, status: 'delivered', attempts: 1 }]),
      await agedWebhook(stack.db, standard.id, now, 60, [{ endpointId: s, status: 'failed', attempts: 11 }]),
      await agedWebhook(stack.db, short.id, now, 8, [{ endpointId: t, status: 'delivered', attempts: 2 }]),
      await agedWebhook(stack.db, short.id, now, 29, [{ endpointId: t, status: 'skipped', attempts: 0 }]),
      await agedWebhook(stack.db, short.id, now, 15, [{ endpointId: null, attempts: 1 }]),
    ];
    const kept = [
      await agedWebhook(stack.db, standard.id, now, 29, [{ endpointId: s, status: 'delivered', attempts: 1 }]),
      await agedWebhook(stack.db, standard.id, now, 45, [{ endpointId: s, status: 'delivering', attempts: 6 }]),
      await agedWebhook(stack.db, short.id, now, 6, [{ endpointId: t, status: 'failed', attempts: 11 }]),
      await agedWebhook(stack.db, short.id, now, 40, [{ endpointId: t, status: 'pending', attempts: 0 }]),
    ];

    assert.deepEqual(await run({ batchSize: 2 }), { webhooks: 5, deliveries: 4, attempts: 15, batches: 3 });

    const left = await stack.db.webhook.findMany({ where: { id: { in: [...gone, ...kept] } }, select: { id: true } });
    assert.deepEqual(left.map((w) => w.id).sort(), [...kept].sort());
    assert.equal(await stack.db.webhookAttempt.count({ where: { webhookId: { in: gone } } }), 0);
    assert.equal(await stack.db.webhookDelivery.count({ where: { webhookId: { in: kept } } }), 4);
    assert.equal((await short.call('GET', `/api/v2/webhooks/${gone[2]}`)).status, 404);
    assert.equal((await short.call('GET', `/api/v2/webhooks/${kept[2]}`)).status, 200);

    assert.deepEqual(await run({}), { webhooks: 0, deliveries: 0, attempts: 0, batches: 1 }, 'a second run');
  });
});
