// Webhook endpoint configuration, records, isolation and replay over HTTP.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, newIssuer, startTestApp, type TestIssuer } from '../helpers/app';
import { Webhook } from 'standardwebhooks';
import {
  deliveryOf,
  insertEndpoint,
  newWebhookRecord,
  outboxWebhook,
  startReceiver,
  storedSecrets,
  waitFor,
  waitForWebhookStatus,
  type Receiver,
} from '../helpers/webhooks';
import { testWebhookSecretKeys } from '../helpers/env';
import { webhookCommands } from '../../scripts/admin/webhook-commands';
import { runAdminCommand } from '../helpers/admin-cli';

describe('webhook API', function () {
  this.timeout(60_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let receiver: Receiver;

  before(async () => {
    stack = await startStack();
    issuer = await newIssuer(stack.app);
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await stack.stop();
  });

  describe('endpoint', () => {
    it('creates with a secret (201), reads without it, updates without it (200), and rotates', async () => {
      const fresh = await newIssuer(stack.app);
      assertError(await fresh.call('GET', '/api/v2/webhook-endpoint'), 404, 'webhook_endpoint_not_found');
      assertError(
        await fresh.call('POST', '/api/v2/webhook-endpoint/rotate-secret'),
        404,
        'webhook_endpoint_not_found',
      );
      const created = await fresh.call('PUT', '/api/v2/webhook-endpoint', { url: receiver.url });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.signingSecret, /^whsec_/);
      assert.deepEqual(
        created.body.enabledTypes,
        [
          'qualified_auth',
          'qualified_settlement',
          'reward_available',
          'reward_expiring',
          'reward_expired',
          'reward_clawed_back',
          'authorization_lapsed',
          'endpoint_disabled',
          'reward_adjusted',
          'claim_resolved',
          'cashback_paid_out',
          'payout_completed',
          'offer_available',
          'chg_erased',
        ],
        'a new endpoint without enabledTypes gets every type',
      );
      const read = await fresh.call('GET', '/api/v2/webhook-endpoint');
      assert.equal(read.status, 200);
      assert.equal(read.body.signingSecret, undefined);
      assert.equal(read.body.url, receiver.url);
      const updated = await fresh.call('PUT', '/api/v2/webhook-endpoint', {
        url: `${receiver.url}/v2`,
        enabledTypes: ['qualified_auth'],
      });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.signingSecret, undefined);
      assert.deepEqual(updated.body.enabledTypes, ['qualified_auth']);
      assert.equal(
        (await storedSecrets(stack.db, fresh.id)).secret,
        created.body.signingSecret,
        'an update keeps the secret',
      );

      const rotated = await fresh.call('POST', '/api/v2/webhook-endpoint/rotate-secret');
      assert.equal(rotated.status, 200, rotated.text);
      assert.notEqual(rotated.body.signingSecret, created.body.signingSecret);
      const after = await stack.db.webhookEndpoint.findFirstOrThrow({
        where: { issuerId: fresh.id },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      });
      const secrets = await storedSecrets(stack.db, fresh.id);
      assert.deepEqual(
        [secrets.secret, secrets.previousSecret],
        [rotated.body.signingSecret, created.body.signingSecret],
      );
      const overlapMs = after.previousSecretExpiresAt!.getTime() - after.updatedAt.getTime();
      assert.equal(overlapMs, 24 * 60 * 60 * 1000);
      assert.equal(
        (await fresh.call('GET', '/api/v2/webhook-endpoint')).body.previousSecretExpiresAt,
        after.previousSecretExpiresAt!.toISOString(),
      );
    });

    it('rejects bad URLs with 400: http for production, credentials, garbage, too long, unknown types', async () => {
      const production = await newIssuer(stack.app, 'production');
      assertError(
        await production.call('PUT', '/api/v2/webhook-endpoint', { url: 'http://hooks.example.com/x' }),
        400,
        'invalid_webhook_url',
      );
      assert.equal(
        (await production.call('PUT', '/api/v2/webhook-endpoint', { url: 'https://hooks.example.com/x' })).status,
        201,
      );
      const sandbox = await newIssuer(stack.app);
      assertError(
        await sandbox.call('PUT', '/api/v2/webhook-endpoint', { url: 'https://u:p@hooks.example.com/' }),
        400,
        'invalid_webhook_url',
      );
      assertError(await sandbox.call('PUT', '/api/v2/webhook-endpoint', { url: 'nope' }), 400, 'invalid_webhook_url');
      assertError(
        await sandbox.call('PUT', '/api/v2/webhook-endpoint', { url: `https://h.example.com/${'a'.repeat(2100)}` }),
        400,
      );
      assertError(
        await sandbox.call('PUT', '/api/v2/webhook-endpoint', {
          url: 'https://h.example.com/',
          enabledTypes: ['refund'],
        }),
        400,
      );
      assertError(await sandbox.call('PUT', '/api/v2/webhook-endpoint', {}), 400);
      assertError(await sandbox.call('GET', '/api/v2/webhook-endpoint'), 404);
    });
  });

  describe('signing secrets at rest', () => {
    /** The whole stored row as PostgreSQL prints it (bytea as hex), searched in every spelling of each secret. */
    async function assertNotStored(issuerId: string, secrets: string[]): Promise<void> {
      const [{ row }] = await stack.db.$queryRaw<
        Array<{ row: string }>
      >`SELECT e::text AS row FROM webhook_endpoint e WHERE e.issuer_id = ${issuerId}`;
      for (const secret of secrets) {
        const keyBytes = Buffer.from(secret.slice('whsec_'.length), 'base64');
        for (const spelling of [
          secret.slice('whsec_'.length),
          Buffer.from(secret).toString('hex'),
          keyBytes.toString('hex'),
          keyBytes.toString('base64url'),
        ]) {
          assert.ok(!row.toLowerCase().includes(spelling.toLowerCase()), `the stored row holds a secret: ${row}`);
        }
      }
    }

    /** A webhook through the outbox: the relay's first attempt reaches the receiver. */
    async function deliveredRequest(issuerId: string, into: Receiver) {
      const webhookId = await outboxWebhook(stack.db, issuerId);
      await waitForWebhookStatus(stack.db, webhookId, ['delivered']);
      return waitFor('the delivered request', async () =>
        into.requests.find((r) => r.headers['webhook-id'] === webhookId),
      );
    }

    const verifies = (secret: string, request: { body: string; headers: object }) => {
      try {
        new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    };

    it('keeps no plaintext secret in the row, and deliveries verify with the returned secrets, both during a rotation', async () => {
      const own = await newIssuer(stack.app);
      const hooks = await startReceiver();
      try {
        const created = await own.call('PUT', '/api/v2/webhook-endpoint', { url: hooks.url });
        assert.equal(created.status, 201, created.text);
        const first: string = created.body.signingSecret;
        await assertNotStored(own.id, [first]);
        const stored = await stack.db.webhookEndpoint.findFirstOrThrow({
          where: { issuerId: own.id },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        });
        assert.equal(stored.secretKeyId, testWebhookSecretKeys.primaryKeyId);
        assert.ok(verifies(first, await deliveredRequest(own.id, hooks)), 'signed with the secret PUT returned');

        const rotated = await own.call('POST', '/api/v2/webhook-endpoint/rotate-secret');
        assert.equal(rotated.status, 200, rotated.text);
        const second: string = rotated.body.signingSecret;
        await assertNotStored(own.id, [first, second]);
        const during = await deliveredRequest(own.id, hooks);
        assert.equal(
          String(during.headers['webhook-signature']).split(' ').length,
          2,
          'two signatures during the overlap',
        );
        assert.ok(verifies(second, during), 'the new secret verifies');
        assert.ok(verifies(first, during), 'the previous secret still verifies during the overlap');
        assert.ok(!verifies(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, during), 'and another secret does not');
      } finally {
        await hooks.close();
      }
    });

    it('refuses a rotation that lost the race to another (409), keeping the winner', async () => {
      const own = await newIssuer(stack.app);
      await own.call('PUT', '/api/v2/webhook-endpoint', { url: receiver.url });
      const results = await Promise.all(
        [1, 2, 3].map(() => own.call('POST', '/api/v2/webhook-endpoint/rotate-secret')),
      );
      const won = results.filter((r) => r.status === 200);
      assert.ok(won.length >= 1, results.map((r) => r.text).join('\n'));
      for (const r of results.filter((r) => r.status !== 200)) assertError(r, 409, 'webhook_endpoint_conflict');
      const last = won.map((r) => r.body.signingSecret as string);
      assert.ok(
        last.includes((await storedSecrets(stack.db, own.id)).secret),
        'the stored secret is one a caller was given',
      );
    });
  });

  describe('records', () => {
    it('lists newest first with filters and pages, and shows one webhook with its deliveries and attempts', async () => {
      const own = await newIssuer(stack.app);
      // Deliveries to an endpoint that no relay of the run sends (newWebhookRecord marks them relayed).
      const endpointId = await insertEndpoint(stack.db, own.id, receiver.url);
      const ids = [];
      for (let i = 0; i < 3; i++)
        ids.push(await newWebhookRecord(stack.db, own.id, i === 1 ? 'qualified_auth' : 'qualified_settlement'));
      const page1 = await own.call('GET', '/api/v2/webhooks?limit=2');
      assert.equal(page1.status, 200, page1.text);
      assert.deepEqual(
        page1.body.data.map((w: any) => w.webhookId),
        [ids[2], ids[1]],
      );
      const page2 = await own.call('GET', `/api/v2/webhooks?limit=2&cursor=${page1.body.nextCursor}`);
      assert.deepEqual(
        page2.body.data.map((w: any) => w.webhookId),
        [ids[0]],
      );
      assert.equal(page2.body.nextCursor, null);
      const auths = await own.call('GET', '/api/v2/webhooks?type=qualified_auth');
      assert.deepEqual(
        auths.body.data.map((w: any) => w.webhookId),
        [ids[1]],
      );
      assert.deepEqual((await own.call('GET', '/api/v2/webhooks?status=delivered')).body.data, []);
      assert.equal((await own.call('GET', '/api/v2/webhooks?status=pending')).body.data.length, 3);
      assertError(await own.call('GET', '/api/v2/webhooks?status=lost'), 400);
      assertError(await own.call('GET', '/api/v2/webhooks?cursor=garbage'), 400);
      const one = await own.call('GET', `/api/v2/webhooks/${ids[0]}`);
      assert.equal(one.status, 200);
      assert.deepEqual([one.body.webhookId, one.body.status, one.body.attempts], [ids[0], 'pending', []]);
      assert.deepEqual(
        one.body.deliveries.map((d: any) => [d.endpointId, d.status, d.attemptCount, d.attempts]),
        [[endpointId, 'pending', 0, []]],
      );
      assert.equal(one.body.data.webhookId, undefined, "the id is the envelope's, not repeated in data");
      assert.match(one.body.data.transactionId, /^txn_/);
    });

    it('reads a webhook that went to no endpoint (none subscribed) as failed, with no delivery', async () => {
      const own = await newIssuer(stack.app);
      const webhookId = await newWebhookRecord(stack.db, own.id);
      const one = await own.call('GET', `/api/v2/webhooks/${webhookId}`);
      assert.equal(one.status, 200, one.text);
      assert.deepEqual(
        [one.body.status, one.body.attemptCount, one.body.deliveries, one.body.attempts],
        ['failed', 0, [], []],
      );
      assert.deepEqual(
        (await own.call('GET', '/api/v2/webhooks?status=failed')).body.data.map((w: any) => w.webhookId),
        [webhookId],
      );
    });

    it("answers 404 webhook_not_found for another issuer's webhook exactly like a missing one, on GET and replay", async () => {
      const mine = await newWebhookRecord(stack.db, issuer.id);
      const other = await newIssuer(stack.app);
      const missing = `evt_${randomUUID()}`;
      for (const id of [mine, missing]) {
        assertError(await other.call('GET', `/api/v2/webhooks/${id}`), 404, 'webhook_not_found');
        assertError(await other.call('POST', `/api/v2/webhooks/${id}/replay`), 404, 'webhook_not_found');
      }
      assert.ok(!(await other.call('GET', '/api/v2/webhooks')).body.data.some((w: any) => w.webhookId === mine));
      assertError(await other.call('GET', '/api/v2/webhooks/evt_nope'), 400, 'invalid_id');
      assert.equal(await stack.db.webhookAttempt.count({ where: { webhookId: mine } }), 0, 'no replay ran');
    });
  });

  describe('replay', () => {
    it('lets the operator replay any webhook, audited, through the API and the admin CLI', async () => {
      const own = await newIssuer(stack.app);
      const endpointId = await insertEndpoint(stack.db, own.id, receiver.url);
      const webhookId = await newWebhookRecord(stack.db, own.id);
      const res = await stack.app.operator('POST', `/admin/v1/webhooks/${webhookId}/replay`);
      assert.equal(res.status, 202, res.text);
      const first = { endpointId, firstAttemptNumber: 1, workflowId: `webhook/${webhookId}/${endpointId}/replay/1` };
      assert.deepEqual(res.body, { webhookId, ...first, deliveries: [first] });
      await waitForWebhookStatus(stack.db, webhookId, ['delivered']);
      const audit = await stack.db.operatorAuditLog.findFirst({
        where: { action: 'webhook.replay', targetId: webhookId },
      });
      assert.equal(audit?.actor, 'root');
      assertError(
        await stack.app.operator('POST', `/admin/v1/webhooks/evt_${randomUUID()}/replay`),
        404,
        'webhook_not_found',
      );

      const printed = await runAdminCommand(stack, webhookCommands[0], [webhookId]);
      const second = { endpointId, firstAttemptNumber: 2, workflowId: `webhook/${webhookId}/${endpointId}/replay/2` };
      assert.deepEqual(printed, [{ webhookId, ...second, deliveries: [second] }]);
      await stack.client.workflow.getHandle(second.workflowId).result();
      const delivery = await deliveryOf(stack.db, webhookId, endpointId);
      assert.deepEqual([delivery.status, delivery.attemptCount], ['delivered', 2]);
      assert.ok(
        await stack.db.operatorAuditLog.findFirst({
          where: { action: 'webhook.replay', targetId: webhookId, actor: 'cli:test' },
        }),
      );
    });

    it('answers 409 while a delivery is still retrying', async () => {
      const own = await newIssuer(stack.app);
      const endpointId = await insertEndpoint(stack.db, own.id, receiver.url);
      const webhookId = await newWebhookRecord(stack.db, own.id);
      await stack.db.webhookDelivery.update({
        where: { webhookId_endpointId: { webhookId, endpointId } },
        data: { status: 'delivering', attemptCount: 1, nextAttemptAt: new Date(Date.now() + 60_000) },
      });
      assertError(await own.call('POST', `/api/v2/webhooks/${webhookId}/replay`), 409, 'webhook_delivery_in_progress');
      assert.equal(await stack.db.webhookAttempt.count({ where: { webhookId } }), 0, 'no replay ran');
    });

    it('answers 409 no_webhook_endpoint when there is no enabled endpoint to replay to', async () => {
      const own = await newIssuer(stack.app);
      const webhookId = await newWebhookRecord(stack.db, own.id);
      assertError(await own.call('POST', `/api/v2/webhooks/${webhookId}/replay`), 409, 'no_webhook_endpoint');
      assertError(
        await stack.app.operator('POST', `/admin/v1/webhooks/${webhookId}/replay`),
        409,
        'no_webhook_endpoint',
      );
      assert.equal(await stack.db.webhookAttempt.count({ where: { webhookId } }), 0, 'no replay ran');
      assert.equal(await stack.db.webhookDelivery.count({ where: { webhookId } }), 0, 'no delivery made');
    });

    it('answers 503 workflow_engine_unavailable when the app has no workflow engine', async () => {
      const app = await startTestApp({ db: stack.db });
      try {
        const webhookId = await newWebhookRecord(stack.db, issuer.id);
        assertError(
          await app.request('POST', `/api/v2/webhooks/${webhookId}/replay`, { token: issuer.token }),
          503,
          'workflow_engine_unavailable',
        );
      } finally {
        await app.close();
      }
    });
  });
});
