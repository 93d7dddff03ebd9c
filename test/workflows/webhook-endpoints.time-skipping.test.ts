// Auto-disable on Temporal's time-skipping test server, with the real worker, relay and
// PostgreSQL: an endpoint that always answers 500 is disabled once its failures span the
// issuer's period; exactly one endpoint_disabled reaches the issuer's healthy endpoint; from
// then on nothing is attempted or scheduled for it; enabled again, `recover` delivers what it
// missed, once. The attempts' clock follows the server's skipped time, as a worker's clock
// follows real time.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createActivities } from '../../activities';
import { createDb, type Db } from '../../prisma/client';
import { createIssuer } from '../../api/issuers/store';
import { webhookDeliveryWorkflowId } from '../../workflows/webhook-delivery-contract';
import { reopenDeliveries } from '../../core/domain/webhook-deliveries';
import { testDatabaseUrl } from '../helpers/env';
import {
  insertEndpoint,
  outboxWebhook,
  startReceiver,
  startTestRelay,
  waitFor,
  type Receiver,
} from '../helpers/webhooks';
import { testActivityDeps, testEngine } from '../helpers/engine';
import { startTimeSkippingServer, workflowWorker } from '../helpers/time-skipping';
import { webhookDeliveriesSkipped, webhookEndpointsDisabled } from '../../core/metrics';

const counted = async (metric: typeof webhookEndpointsDisabled) => (await metric.get()).values[0]?.value ?? 0;

describe('webhook endpoint auto-disable on the time-skipping server', function () {
  this.timeout(180_000);
  let env: TestWorkflowEnvironment;
  let db: Db;
  let failing: Receiver;
  let healthy: Receiver;
  // The server's time, as the attempts read it: real time plus what the server skipped, taken
  // when each attempt activity starts (time does not skip while one runs).
  let skewMs = 0;
  const clock = { now: () => new Date(Date.now() + skewMs) };

  before(async () => {
    env = await startTimeSkippingServer();
    db = createDb(testDatabaseUrl(), 5);
    failing = await startReceiver(() => 500);
    healthy = await startReceiver();
  });
  after(async () => {
    await env?.teardown();
    await db?.$disconnect();
    await failing?.close();
    await healthy?.close();
  });

  const endpoint = (issuerId: string, url: string, enabledTypes: string[]) =>
    insertEndpoint(db, issuerId, url, { enabledTypes, createdAt: clock.now() });

  const settlement = (issuerId: string) => outboxWebhook(db, issuerId, clock.now());

  const received = (receiver: Receiver, type: string) =>
    receiver.requests.map((r) => JSON.parse(r.body)).filter((body) => body.type === type);

  it('disables a failing endpoint once, tells the healthy one, stops all work for it, and recovers it', async () => {
    const now = clock.now();
    const [disabledBefore, skippedBefore] = [
      await counted(webhookEndpointsDisabled),
      await counted(webhookDeliveriesSkipped),
    ];
    const issuer = await createIssuer(db, { name: 'Auto-disable issuer', environment: 'sandbox' }, 'test', now);
    // One day of nothing but failures: the default schedule's tenth attempt (at about 46 h)
    // is the first whose run of failures began more than a day before.
    await db.issuer.update({ where: { id: issuer.id }, data: { webhookEndpointDisableAfter: '1d' } });
    const bad = await endpoint(issuer.id, failing.url, ['qualified_settlement']);
    await endpoint(issuer.id, healthy.url, ['qualified_settlement', 'endpoint_disabled']);

    const engine = testEngine(env.client, `test-${randomUUID()}`);
    const activities = createActivities(testActivityDeps(db, engine, { clock }));
    const attempt = activities.attemptWebhookDelivery;
    activities.attemptWebhookDelivery = async (input) => {
      skewMs = (await env.currentTimeMs()) - Date.now();
      return attempt(input);
    };
    const worker = await workflowWorker(env, engine, activities, db);
    const relay = startTestRelay(db, engine, { clock });
    try {
      await worker.runUntil(async () => {
        const first = await settlement(issuer.id);
        const retries = env.client.workflow.getHandle(webhookDeliveryWorkflowId(first, bad));
        await waitFor('the failing delivery to be handed to its workflow', () =>
          retries.describe().then(
            () => true,
            (err) => (err instanceof WorkflowNotFoundError ? undefined : Promise.reject(err)),
          ),
        );
        const result = await retries.result();
        assert.deepEqual(
          result,
          { webhookId: first, status: 'skipped', attempts: 9 },
          'attempts 2..10 made; the eleventh found it disabled',
        );
        const disabled = await db.webhookEndpoint.findUniqueOrThrow({ where: { id: bad } });
        assert.deepEqual(
          [disabled.status, disabled.disabledReason, disabled.consecutiveFailures],
          ['disabled', 'failing', 10],
        );
        const delivery = await db.webhookDelivery.findUniqueOrThrow({
          where: { webhookId_endpointId: { webhookId: first, endpointId: bad } },
        });
        assert.deepEqual([delivery.status, delivery.attemptCount], ['skipped', 10]);

        const notices = await waitFor('endpoint_disabled at the healthy endpoint', async () => {
          const got = received(healthy, 'endpoint_disabled');
          return got.length > 0 ? got : undefined;
        });
        assert.equal(notices.length, 1);
        assert.deepEqual(
          [notices[0].data.endpointId, notices[0].data.url, notices[0].data.reason],
          [bad, failing.url, 'failing'],
        );
        assert.equal(
          await db.operatorAuditLog.count({ where: { action: 'webhook_endpoint.disabled', targetId: bad } }),
          1,
        );
        assert.equal(
          await counted(webhookEndpointsDisabled),
          disabledBefore + 1,
          'rewards_webhook_endpoints_disabled_total',
        );
        assert.equal(await counted(webhookDeliveriesSkipped), skippedBefore + 1, 'the retry run ended skipped');

        // Disabled: a new webhook's delivery to it ends skipped at once, no attempt, no workflow.
        const failingRequests = failing.requests.length;
        const second = await settlement(issuer.id);
        await waitFor('the healthy endpoint to receive the second', async () =>
          received(healthy, 'qualified_settlement').some((b) => b.webhookId === second) ? true : undefined,
        );
        const skipped = await db.webhookDelivery.findUniqueOrThrow({
          where: { webhookId_endpointId: { webhookId: second, endpointId: bad } },
        });
        assert.deepEqual([skipped.status, skipped.attemptCount], ['skipped', 0]);
        assert.equal(await db.webhookAttempt.count({ where: { webhookId: second, endpointId: bad } }), 0);
        await assert.rejects(
          env.client.workflow.getHandle(webhookDeliveryWorkflowId(second, bad)).describe(),
          WorkflowNotFoundError,
        );
        assert.equal(failing.requests.length, failingRequests, 'nothing sent to it');

        // Fixed and enabled again: recover sends both, once each, with their own ids.
        failing.answer = () => 204;
        await db.webhookEndpoint.update({
          where: { id: bad },
          data: {
            status: 'enabled',
            disabledReason: null,
            disabledAt: null,
            consecutiveFailures: 0,
            failingSince: null,
          },
        });
        const count = await reopenDeliveries(db, {
          issuerId: issuer.id,
          endpointId: bad,
          since: now,
          until: clock.now(),
          at: clock.now(),
        });
        assert.equal(count, 2);
        const recovered = await waitFor('both to arrive', async () => {
          const got = failing.requests.slice(failingRequests).map((r) => JSON.parse(r.body).webhookId);
          return got.length >= 2 ? got : undefined;
        });
        await waitFor('both deliveries delivered', async () =>
          (await db.webhookDelivery.count({ where: { endpointId: bad, status: 'delivered' } })) === 2
            ? true
            : undefined,
        );
        assert.deepEqual(recovered.sort(), [first, second].sort());
        assert.equal(failing.requests.length, failingRequests + 2, 'once each');
        assert.equal(received(healthy, 'endpoint_disabled').length, 1, 'still exactly one endpoint_disabled');
      });
    } finally {
      await relay.stop();
    }
  });
});
