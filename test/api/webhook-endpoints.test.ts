// Several webhook endpoints per issuer over HTTP: their lifecycle, the limit, isolation, status
// and health, secrets, the singular routes on the first endpoint, test events, recovery, and
// the operator's WEBHOOK_ENDPOINT_DISABLE_AFTER override.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { assertError, newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { testWebhookSecretKeys } from '../helpers/env';
import { openSecrets } from '../../core/webhooks/secret-sealing';
import { newId } from '../../core/ids';
import { exampleData } from '../../api/openapi-webhooks';
import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';

const URL = 'https://hooks.example.com/rewards';
const MISSING = 'whe_00000000-0000-7000-8000-000000000000';

describe('webhook endpoints API', function () {
  this.timeout(60_000);
  let app: TestApp;

  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const create = (issuer: TestIssuer, body: object = { url: URL }) =>
    issuer.call('POST', '/api/v2/webhook-endpoints', body);
  const endpointRow = (id: string) => app.db.webhookEndpoint.findUniqueOrThrow({ where: { id } });

  describe('lifecycle', () => {
    it('creates (201, secret once), lists oldest first, reads, patches and deletes (204)', async () => {
      const issuer = await newIssuer(app);
      const first = await create(issuer, { url: URL, description: 'main', rateLimitPerSecond: 20 });
      assert.equal(first.status, 201, first.text);
      assert.match(first.body.id, /^whe_/);
      assert.match(first.body.signingSecret, /^whsec_/);
      const { id: _id, signingSecret: _secret, createdAt: _c, updatedAt: _u, ...rest } = first.body;
      assert.deepEqual(rest, {
        url: URL,
        enabledTypes: [...WEBHOOK_TYPES],
        description: 'main',
        status: 'enabled',
        disabledReason: null,
        rateLimitPerSecond: 20,
        health: { consecutiveFailures: 0, failingSince: null, lastSuccessAt: null, lastFailureAt: null },
        previousSecretExpiresAt: null,
      });
      const stored = await endpointRow(first.body.id);
      assert.equal(openSecrets(testWebhookSecretKeys, issuer.id, stored).secret, first.body.signingSecret);

      const second = await create(issuer, { url: `${URL}/2`, enabledTypes: ['reward_expired'] });
      assert.equal(second.status, 201, second.text);
      assert.deepEqual(second.body.enabledTypes, ['reward_expired']);
      assert.equal(second.body.description, '');
      assert.equal(second.body.rateLimitPerSecond, null);

      const list = await issuer.call('GET', '/api/v2/webhook-endpoints');
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(
        list.body.data.map((e: any) => e.id),
        [first.body.id, second.body.id],
      );
      assert.equal(list.body.nextCursor, null);
      assert.ok(list.body.data.every((e: any) => e.signingSecret === undefined));
      const page1 = await issuer.call('GET', '/api/v2/webhook-endpoints?limit=1');
      const page2 = await issuer.call('GET', `/api/v2/webhook-endpoints?limit=1&cursor=${page1.body.nextCursor}`);
      assert.deepEqual(
        [...page1.body.data, ...page2.body.data].map((e: any) => e.id),
        [first.body.id, second.body.id],
      );

      const read = await issuer.call('GET', `/api/v2/webhook-endpoints/${second.body.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.signingSecret, undefined);
      assert.equal(read.body.url, `${URL}/2`);

      const patched = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${second.body.id}`, {
        url: `${URL}/3`,
        enabledTypes: ['qualified_auth', 'reward_available'],
        description: 'notices',
        rateLimitPerSecond: 5,
      });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(
        [patched.body.url, patched.body.enabledTypes, patched.body.description, patched.body.rateLimitPerSecond],
        [`${URL}/3`, ['qualified_auth', 'reward_available'], 'notices', 5],
      );
      const unset = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${second.body.id}`, {
        rateLimitPerSecond: null,
      });
      assert.equal(unset.body.rateLimitPerSecond, null);
      assert.equal(unset.body.url, `${URL}/3`, 'fields left out keep their value');

      const deleted = await issuer.call('DELETE', `/api/v2/webhook-endpoints/${second.body.id}`);
      assert.equal(deleted.status, 204, deleted.text);
      assertError(
        await issuer.call('GET', `/api/v2/webhook-endpoints/${second.body.id}`),
        404,
        'webhook_endpoint_not_found',
      );
      assertError(await issuer.call('DELETE', `/api/v2/webhook-endpoints/${second.body.id}`), 404);
      assert.deepEqual(
        (await issuer.call('GET', '/api/v2/webhook-endpoints')).body.data.map((e: any) => e.id),
        [first.body.id],
      );
    });

    it('refuses an 11th endpoint with 409 endpoint_limit_reached, also when they are created at once', async () => {
      const issuer = await newIssuer(app);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => create(issuer, { url: `${URL}/${i}` })));
      assert.equal(results.filter((r) => r.status === 201).length, 10);
      for (const r of results.filter((r) => r.status !== 201)) assertError(r, 409, 'endpoint_limit_reached');
      assert.equal(await app.db.webhookEndpoint.count({ where: { issuerId: issuer.id } }), 10);
      const put = await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: `${URL}/first` });
      assert.equal(put.status, 200, 'the singular PUT replaces the first endpoint, creating none');
      assert.equal(await app.db.webhookEndpoint.count({ where: { issuerId: issuer.id } }), 10);
    });

    it('frees a place when an endpoint is deleted', async () => {
      const issuer = await newIssuer(app);
      const ids: string[] = [];
      for (let i = 0; i < 10; i++) ids.push((await create(issuer)).body.id);
      assertError(await create(issuer), 409, 'endpoint_limit_reached');
      await issuer.call('DELETE', `/api/v2/webhook-endpoints/${ids[3]}`);
      assert.equal((await create(issuer)).status, 201);
    });
  });

  describe('validation', () => {
    it('refuses bad URLs, unknown types, bad statuses, rates and ids with 400', async () => {
      const issuer = await newIssuer(app);
      const production = await newIssuer(app, 'production');
      assertError(await create(issuer, { url: 'nope' }), 400, 'invalid_webhook_url');
      assertError(await create(issuer, { url: 'https://u:p@hooks.example.com/' }), 400, 'invalid_webhook_url');
      assertError(await create(production, { url: 'http://hooks.example.com/x' }), 400, 'invalid_webhook_url');
      assertError(await create(issuer, { url: 'https://224.0.0.1/hooks' }), 400, 'destination_not_allowed');
      assertError(await create(issuer, { url: URL, enabledTypes: ['refund'] }), 400, 'invalid_body');
      assertError(await create(issuer, { url: URL, enabledTypes: [] }), 400, 'invalid_body');
      assertError(await create(issuer, { url: URL, rateLimitPerSecond: 0 }), 400, 'invalid_body');
      assertError(await create(issuer, { url: URL, rateLimitPerSecond: 1001 }), 400, 'invalid_body');
      assertError(await create(issuer, { url: URL, secret: 'mine' }), 400, 'invalid_body');
      assertError(await create(issuer, {}), 400, 'invalid_body');
      assert.equal(await app.db.webhookEndpoint.count({ where: { issuerId: issuer.id } }), 0);

      const { id } = (await create(issuer)).body;
      const patch = (body: object) => issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, body);
      assertError(await patch({ status: 'paused' }), 400, 'invalid_body');
      assertError(await patch({ enabledTypes: ['refund'] }), 400, 'invalid_body');
      assertError(await patch({ url: 'ftp://hooks.example.com/' }), 400, 'invalid_webhook_url');
      assertError(await patch({ url: 'https://hooks.example.com:25/' }), 400, 'destination_not_allowed');
      assertError(await patch({}), 400, 'invalid_body');
      assert.equal((await endpointRow(id)).url, URL, 'nothing changed');
      assertError(await issuer.call('GET', '/api/v2/webhook-endpoints/evt_nope'), 400, 'invalid_id');
      assertError(await issuer.call('GET', '/api/v2/webhook-endpoints?cursor=garbage'), 400, 'invalid_query');
      assertError(await issuer.call('POST', `/api/v2/webhook-endpoints/${id}/test`, { type: 'refund' }), 400);
      assertError(await issuer.call('POST', `/api/v2/webhook-endpoints/${id}/recover`, { since: 'yesterday' }), 400);
    });
  });

  describe('isolation', () => {
    it("answers 404 webhook_endpoint_not_found on every route for another issuer's endpoint, changing nothing", async () => {
      const owner = await newIssuer(app);
      const intruder = await newIssuer(app);
      const { id } = (await create(owner)).body;
      const before = await endpointRow(id);
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const calls: Array<[string, string, object?]> = [
        ['GET', ''],
        ['PATCH', '', { status: 'disabled' }],
        ['DELETE', ''],
        ['POST', '/rotate-secret'],
        ['POST', '/test', { type: 'qualified_settlement' }],
        ['POST', '/recover', { since }],
      ];
      for (const endpointId of [id, MISSING]) {
        for (const [method, tail, body] of calls) {
          const res = await intruder.call(method, `/api/v2/webhook-endpoints/${endpointId}${tail}`, body);
          assertError(res, 404, 'webhook_endpoint_not_found');
        }
      }
      assert.deepEqual((await intruder.call('GET', '/api/v2/webhook-endpoints')).body.data, []);
      assertError(await intruder.call('GET', '/api/v2/webhook-endpoint'), 404, 'webhook_endpoint_not_found');
      assert.deepEqual(await endpointRow(id), before);
      assert.equal(await app.db.webhook.count({ where: { issuerId: intruder.id } }), 0);
    });
  });

  describe('status and health', () => {
    it('disables by hand (manual) and, enabled again, starts with fresh health', async () => {
      const issuer = await newIssuer(app);
      const { id } = (await create(issuer)).body;
      const failingSince = new Date(Date.now() - 86_400_000);
      const lastFailureAt = new Date(Date.now() - 60_000);
      await app.db.webhookEndpoint.update({
        where: { id },
        data: { consecutiveFailures: 7, failingSince, lastFailureAt },
      });
      const shown = (await issuer.call('GET', `/api/v2/webhook-endpoints/${id}`)).body.health;
      assert.deepEqual(shown, {
        consecutiveFailures: 7,
        failingSince: failingSince.toISOString(),
        lastSuccessAt: null,
        lastFailureAt: lastFailureAt.toISOString(),
      });

      const disabled = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'disabled' });
      assert.equal(disabled.status, 200, disabled.text);
      assert.deepEqual([disabled.body.status, disabled.body.disabledReason], ['disabled', 'manual']);
      const row = await endpointRow(id);
      assert.ok(row.disabledAt, 'disabled_at is set');
      assert.equal(row.consecutiveFailures, 7, 'disabling keeps the health');

      const again = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'disabled' });
      assert.deepEqual((await endpointRow(id)).disabledAt, row.disabledAt, 'disabling again changes nothing');
      assert.equal(again.body.disabledReason, 'manual');

      const enabled = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'enabled' });
      assert.equal(enabled.status, 200, enabled.text);
      assert.deepEqual([enabled.body.status, enabled.body.disabledReason], ['enabled', null]);
      assert.deepEqual(enabled.body.health, {
        consecutiveFailures: 0,
        failingSince: null,
        lastSuccessAt: null,
        lastFailureAt: lastFailureAt.toISOString(),
      });
      assert.equal((await endpointRow(id)).disabledAt, null);
    });

    it('enables an endpoint the service disabled for failing', async () => {
      const issuer = await newIssuer(app);
      const { id } = (await create(issuer)).body;
      await app.db.webhookEndpoint.update({
        where: { id },
        data: {
          status: 'disabled',
          disabledReason: 'failing',
          disabledAt: new Date(),
          consecutiveFailures: 40,
          failingSince: new Date(Date.now() - 5 * 86_400_000),
        },
      });
      const still = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'disabled' });
      assert.equal(still.body.disabledReason, 'failing', 'disabling a disabled endpoint keeps its reason');
      const enabled = await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'enabled' });
      assert.deepEqual(
        [enabled.body.status, enabled.body.disabledReason, enabled.body.health.consecutiveFailures],
        ['enabled', null, 0],
      );
    });
  });

  describe('secrets', () => {
    it('rotates one endpoint, leaving the others, with a 24 h overlap', async () => {
      const issuer = await newIssuer(app);
      const a = (await create(issuer)).body;
      const b = (await create(issuer)).body;
      const rotated = await issuer.call('POST', `/api/v2/webhook-endpoints/${b.id}/rotate-secret`);
      assert.equal(rotated.status, 200, rotated.text);
      assert.notEqual(rotated.body.signingSecret, b.signingSecret);
      const rowB = await endpointRow(b.id);
      assert.deepEqual(openSecrets(testWebhookSecretKeys, issuer.id, rowB), {
        secret: rotated.body.signingSecret,
        previousSecret: b.signingSecret,
      });
      assert.equal(rowB.previousSecretExpiresAt!.getTime() - rowB.updatedAt.getTime(), 24 * 60 * 60 * 1000);
      assert.equal(rotated.body.previousSecretExpiresAt, rowB.previousSecretExpiresAt!.toISOString());
      assert.deepEqual(openSecrets(testWebhookSecretKeys, issuer.id, await endpointRow(a.id)), {
        secret: a.signingSecret,
        previousSecret: null,
      });
    });
  });

  describe('singular routes', () => {
    it('address the first (oldest) endpoint, and PUT creates it when there is none', async () => {
      const issuer = await newIssuer(app);
      const put = await issuer.call('PUT', '/api/v2/webhook-endpoint', { url: URL });
      assert.equal(put.status, 201, put.text);
      assert.match(put.body.id, /^whe_/);
      const second = (await create(issuer, { url: `${URL}/2` })).body;
      const read = await issuer.call('GET', '/api/v2/webhook-endpoint');
      assert.equal(read.body.id, put.body.id);
      assert.deepEqual(read.body, (await issuer.call('GET', `/api/v2/webhook-endpoints/${put.body.id}`)).body);

      const replaced = await issuer.call('PUT', '/api/v2/webhook-endpoint', {
        url: `${URL}/first`,
        enabledTypes: ['qualified_auth'],
      });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual([replaced.body.id, replaced.body.url], [put.body.id, `${URL}/first`]);
      assert.equal((await endpointRow(second.id)).url, `${URL}/2`, 'the second endpoint is untouched');
      assert.equal(await app.db.webhookEndpoint.count({ where: { issuerId: issuer.id } }), 2);

      const rotated = await issuer.call('POST', '/api/v2/webhook-endpoint/rotate-secret');
      assert.equal(rotated.status, 200, rotated.text);
      assert.equal(
        openSecrets(testWebhookSecretKeys, issuer.id, await endpointRow(put.body.id)).secret,
        rotated.body.signingSecret,
      );
      assert.equal(openSecrets(testWebhookSecretKeys, issuer.id, await endpointRow(second.id)).previousSecret, null);

      await issuer.call('DELETE', `/api/v2/webhook-endpoints/${put.body.id}`);
      assert.equal((await issuer.call('GET', '/api/v2/webhook-endpoint')).body.id, second.id, 'the next oldest');
    });

    it('creates only one first endpoint when PUTs race', async () => {
      const issuer = await newIssuer(app);
      const results = await Promise.all(
        [1, 2, 3, 4].map((i) => issuer.call('PUT', '/api/v2/webhook-endpoint', { url: `${URL}/${i}` })),
      );
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 201]);
      assert.equal(await app.db.webhookEndpoint.count({ where: { issuerId: issuer.id } }), 1);
    });
  });

  describe('test events', () => {
    it("records the type's published example as a test webhook with one delivery, to that endpoint only", async () => {
      const issuer = await newIssuer(app);
      const a = (await create(issuer)).body;
      const b = (await create(issuer)).body;
      const res = await issuer.call('POST', `/api/v2/webhook-endpoints/${b.id}/test`, { type: 'reward_expiring' });
      assert.equal(res.status, 202, res.text);
      assert.match(res.body.webhookId, /^evt_/);
      const webhook = await app.db.webhook.findUniqueOrThrow({ where: { id: res.body.webhookId } });
      assert.deepEqual(
        [webhook.issuerId, webhook.type, webhook.test, webhook.data],
        [issuer.id, 'reward_expiring', true, exampleData('reward_expiring')],
      );
      const deliveries = await app.db.webhookDelivery.findMany({ where: { webhookId: webhook.id } });
      assert.deepEqual(
        deliveries.map((d) => [d.endpointId, d.issuerId, d.status]),
        [[b.id, issuer.id, 'pending']],
      );
      assert.equal(await app.db.webhookDelivery.count({ where: { endpointId: a.id } }), 0);
    });

    it('sends a type the endpoint does not subscribe to, and refuses a disabled endpoint with 409', async () => {
      const issuer = await newIssuer(app);
      const { id } = (await create(issuer, { url: URL, enabledTypes: ['qualified_auth'] })).body;
      const other = await issuer.call('POST', `/api/v2/webhook-endpoints/${id}/test`, { type: 'qualified_settlement' });
      assert.equal(other.status, 202, other.text);
      assert.deepEqual(
        (await app.db.webhookDelivery.findMany({ where: { webhookId: other.body.webhookId } })).map(
          (d) => d.endpointId,
        ),
        [id],
      );
      await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'disabled' });
      assertError(
        await issuer.call('POST', `/api/v2/webhook-endpoints/${id}/test`, { type: 'qualified_auth' }),
        409,
        'endpoint_disabled',
      );
      assert.equal(await app.db.webhook.count({ where: { issuerId: issuer.id } }), 1);
    });
  });

  describe('recover', () => {
    /**
     * A webhook and its delivery to the endpoint, as the delivery side leaves them, in one
     * statement as the service writes them (a webhook committed without deliveries gets them
     * from the migration's trigger for the previous release's writers).
     */
    async function delivery(issuerId: string, endpointId: string, status: string, at: Date): Promise<string> {
      const id = newId('evt');
      const attempts = status === 'pending' ? 0 : 3;
      await app.db.$executeRaw`
        WITH written AS (
          INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, created_at, updated_at)
          VALUES (${id}, ${issuerId}, 'qualified_settlement', ${`txn_${randomUUID()}`}, ${`test-recover:${id}`}, '{}'::jsonb, ${at}, ${at})
          RETURNING id)
        INSERT INTO webhook_delivery (webhook_id, endpoint_id, issuer_id, status, attempt_count, relayed_at, created_at, updated_at)
        SELECT id, ${endpointId}, ${issuerId}, ${status}, ${attempts}, ${status === 'pending' ? null : at}, ${at}, ${at}
          FROM written`;
      return id;
    }

    it('reopens exactly the failed and skipped deliveries of the endpoint in the window', async () => {
      const issuer = await newIssuer(app);
      const endpoint = (await create(issuer)).body;
      const other = (await create(issuer)).body;
      const hour = 3_600_000;
      const now = Date.now();
      const inWindow = new Date(now - 5 * hour);
      const ids = {
        failed: await delivery(issuer.id, endpoint.id, 'failed', inWindow),
        skipped: await delivery(issuer.id, endpoint.id, 'skipped', new Date(now - 4 * hour)),
        delivered: await delivery(issuer.id, endpoint.id, 'delivered', inWindow),
        delivering: await delivery(issuer.id, endpoint.id, 'delivering', inWindow),
        beforeWindow: await delivery(issuer.id, endpoint.id, 'failed', new Date(now - 30 * hour)),
        afterWindow: await delivery(issuer.id, endpoint.id, 'failed', new Date(now - hour)),
        otherEndpoint: await delivery(issuer.id, other.id, 'failed', inWindow),
      };
      const res = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoint.id}/recover`, {
        since: new Date(now - 24 * hour).toISOString(),
        until: new Date(now - 2 * hour).toISOString(),
      });
      assert.equal(res.status, 202, res.text);
      assert.deepEqual(res.body, { count: 2 });
      const statusOf = async (webhookId: string, endpointId = endpoint.id) =>
        await app.db.webhookDelivery.findUniqueOrThrow({ where: { webhookId_endpointId: { webhookId, endpointId } } });
      const reopened = await statusOf(ids.failed);
      assert.deepEqual([reopened.status, reopened.relayedAt, reopened.attemptCount], ['pending', null, 3]);
      assert.equal((await statusOf(ids.skipped)).status, 'pending');
      assert.equal((await statusOf(ids.delivered)).status, 'delivered');
      assert.equal((await statusOf(ids.delivering)).status, 'delivering');
      assert.equal((await statusOf(ids.beforeWindow)).status, 'failed');
      assert.equal((await statusOf(ids.afterWindow)).status, 'failed');
      assert.equal((await statusOf(ids.otherEndpoint, other.id)).status, 'failed');

      const untilNow = await issuer.call('POST', `/api/v2/webhook-endpoints/${endpoint.id}/recover`, {
        since: new Date(now - 24 * hour).toISOString(),
      });
      assert.deepEqual(untilNow.body, { count: 1 }, 'until defaults to now: the later failure');
      assert.equal((await statusOf(ids.afterWindow)).status, 'pending');
    });

    it('refuses a window that is empty or starts in the future (400) and a disabled endpoint (409)', async () => {
      const issuer = await newIssuer(app);
      const { id } = (await create(issuer)).body;
      const recover = (body: object) => issuer.call('POST', `/api/v2/webhook-endpoints/${id}/recover`, body);
      const at = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();
      assertError(await recover({ since: at(3_600_000) }), 400, 'invalid_window');
      assertError(await recover({ since: at(-3_600_000), until: at(-7_200_000) }), 400, 'invalid_window');
      // One instant for both ends: two calls of at() may fall on different milliseconds.
      const hourAgo = at(-3_600_000);
      assertError(await recover({ since: hourAgo, until: hourAgo }), 400, 'invalid_window');
      assertError(await recover({ until: at(0) }), 400, 'invalid_body');
      assertError(await recover({ since: at(-1000), extra: 1 }), 400, 'invalid_body');
      assert.deepEqual((await recover({ since: at(-3_600_000) })).body, { count: 0 });
      await issuer.call('PATCH', `/api/v2/webhook-endpoints/${id}`, { status: 'disabled' });
      assertError(await recover({ since: at(-3_600_000) }), 409, 'endpoint_disabled');
    });
  });

  describe('operator: webhookEndpointDisableAfter', () => {
    it('sets a duration or never, resets with null, and shows it (null when unset)', async () => {
      const issuer = await newIssuer(app);
      const path = `/admin/v1/issuers/${issuer.id}`;
      assert.equal((await app.operator('GET', path)).body.webhookEndpointDisableAfter, null);
      const set = await app.operator('PATCH', path, { webhookEndpointDisableAfter: '72h' });
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.webhookEndpointDisableAfter, '3d', 'stored in its shortest spelling');
      assert.equal((await app.operator('GET', path)).body.webhookEndpointDisableAfter, '3d');
      assert.equal(
        (await app.db.issuer.findUniqueOrThrow({ where: { id: issuer.id } })).webhookEndpointDisableAfter,
        '3d',
      );
      assert.equal(
        (await app.operator('PATCH', path, { webhookEndpointDisableAfter: 'never' })).body.webhookEndpointDisableAfter,
        'never',
      );
      assert.equal(
        (await app.operator('PATCH', path, { name: 'Renamed' })).body.webhookEndpointDisableAfter,
        'never',
        'kept',
      );
      assert.equal(
        (await app.operator('PATCH', path, { webhookEndpointDisableAfter: '1h' })).body.webhookEndpointDisableAfter,
        '1h',
      );
      assert.equal(
        (await app.operator('PATCH', path, { webhookEndpointDisableAfter: '365d' })).body.webhookEndpointDisableAfter,
        '365d',
      );
      assert.equal(
        (await app.operator('PATCH', path, { webhookEndpointDisableAfter: null })).body.webhookEndpointDisableAfter,
        null,
      );
    });

    it('refuses what is no duration, below 1h or above 365d (400 invalid_body), changing nothing', async () => {
      const issuer = await newIssuer(app);
      const path = `/admin/v1/issuers/${issuer.id}`;
      await app.operator('PATCH', path, { webhookEndpointDisableAfter: '5d' });
      for (const value of ['59m', '366d', '5 days', '5', 'Never', '', 5, '1h30m']) {
        assertError(await app.operator('PATCH', path, { webhookEndpointDisableAfter: value }), 400, 'invalid_body');
      }
      assert.equal((await app.operator('GET', path)).body.webhookEndpointDisableAfter, '5d');
      assertError(await issuer.call('PATCH', path, { webhookEndpointDisableAfter: '5d' }), 401);
    });
  });
});
