// Migration 20261126000000_webhook_endpoints on a database written with one endpoint per
// issuer: that endpoint becomes the issuer's first, with an id, its secret and types, enabled
// and healthy; every stored webhook gets a delivery to it carrying the state the webhook had
// (outbox state included, so a webhook waiting for its first attempt is still relayed); stored
// webhooks and attempts keep their ids, and the attempts belong to that delivery. An issuer
// that had no endpoint keeps its webhooks (failed, not_configured) without deliveries.
import assert from 'node:assert/strict';
import pg from 'pg';
import { migrate } from '../../prisma/migrate';
import { databaseBefore } from '../helpers/databases';
import { idPattern } from '../../core/ids';

const MIGRATION = '20261126000000_webhook_endpoints';

describe(`prisma/migrations: ${MIGRATION}`, function () {
  this.timeout(60_000);
  let client: pg.Client;
  const sealed = `decode(repeat('ab', 40), 'hex')`;

  before(async () => {
    const url = await databaseBefore('webhook_endpoints', MIGRATION);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `INSERT INTO issuer (id, name, environment) VALUES ('iss_one', 'One', 'production'), ('iss_none', 'None', 'sandbox')`,
    );
    await client.query(
      `INSERT INTO webhook_endpoint (issuer_id, url, enabled_types, secret_key_id, secret_ciphertext, created_at)
       VALUES ('iss_one', 'https://hooks.example.com/w', '{qualified_settlement}', 'k1', ${sealed}, '2026-11-01T00:00:00Z')`,
    );
    const webhook = (id: string, issuer: string, status: string, relayed: boolean, attempts: number) =>
      client.query(
        `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, status, attempt_count,
                              delivered_at, relayed_at, created_at)
         VALUES ($1, $2, 'qualified_settlement', 'txn_' || $1, 'k:' || $1, '{}', $3, $4,
                 CASE WHEN $3 = 'delivered' THEN now() END, CASE WHEN $5 THEN now() END, '2026-11-20T00:00:00Z')`,
        [id, issuer, status, attempts, relayed],
      );
    await webhook('evt_delivered', 'iss_one', 'delivered', true, 2);
    await webhook('evt_waiting', 'iss_one', 'pending', false, 0);
    await webhook('evt_nowhere', 'iss_none', 'failed', true, 1);
    const attempt = (webhookId: string, n: number, outcome: string, errorClass: string | null) =>
      client.query(
        `INSERT INTO webhook_attempt (id, webhook_id, attempt_number, started_at, latency_ms, outcome, error_class, error)
         VALUES ($1 || '/attempt/' || $2::int, $1, $2::int, now(), 5, $3, $4, CASE WHEN $4::text IS NULL THEN NULL ELSE $4 || ': x' END)`,
        [webhookId, n, outcome, errorClass],
      );
    await attempt('evt_delivered', 1, 'failed', 'http_status');
    await attempt('evt_delivered', 2, 'succeeded', null);
    await attempt('evt_nowhere', 1, 'failed', 'not_configured');
    await migrate(url);
  });
  after(async () => {
    await client?.end();
  });

  it("makes the issuer's endpoint its first, with an id, its secret and types, enabled and healthy", async () => {
    const { rows } = await client.query(`SELECT * FROM webhook_endpoint WHERE issuer_id = 'iss_one'`);
    assert.equal(rows.length, 1);
    const [ep] = rows;
    assert.match(ep.id, new RegExp(idPattern('whe')));
    assert.deepEqual(
      [
        ep.url,
        ep.enabled_types,
        ep.secret_key_id,
        ep.secret_ciphertext.toString('hex'),
        ep.status,
        ep.consecutive_failures,
      ],
      ['https://hooks.example.com/w', ['qualified_settlement'], 'k1', 'ab'.repeat(40), 'enabled', 0],
    );
    assert.equal(ep.failing_since, null);
  });

  it('gives every stored webhook of that issuer a delivery to it with the state it had, attempts included', async () => {
    const [{ id: endpointId }] = (await client.query(`SELECT id FROM webhook_endpoint WHERE issuer_id = 'iss_one'`))
      .rows;
    const { rows } = await client.query(
      `SELECT webhook_id, endpoint_id, status, attempt_count, relayed_at IS NOT NULL AS relayed, relay_attempt_number
         FROM webhook_delivery ORDER BY webhook_id`,
    );
    assert.deepEqual(rows, [
      {
        webhook_id: 'evt_delivered',
        endpoint_id: endpointId,
        status: 'delivered',
        attempt_count: 2,
        relayed: true,
        relay_attempt_number: 1,
      },
      {
        webhook_id: 'evt_waiting',
        endpoint_id: endpointId,
        status: 'pending',
        attempt_count: 0,
        relayed: false,
        relay_attempt_number: 1,
      },
    ]);
    const attempts = await client.query(`SELECT id, webhook_id, endpoint_id FROM webhook_attempt ORDER BY id`);
    assert.deepEqual(attempts.rows, [
      { id: 'evt_delivered/attempt/1', webhook_id: 'evt_delivered', endpoint_id: endpointId },
      { id: 'evt_delivered/attempt/2', webhook_id: 'evt_delivered', endpoint_id: endpointId },
      { id: 'evt_nowhere/attempt/1', webhook_id: 'evt_nowhere', endpoint_id: null },
    ]);
    const webhooks = await client.query(`SELECT id FROM webhook ORDER BY id`);
    assert.deepEqual(
      webhooks.rows.map((r) => r.id),
      ['evt_delivered', 'evt_nowhere', 'evt_waiting'],
    );
  });

  it("marks every stored webhook relayed, so the previous release's relays claim none", async () => {
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM webhook WHERE relayed_at IS NULL`);
    assert.equal(rows[0].n, 0);
  });

  it('gives a webhook written by the previous release its deliveries when it commits', async () => {
    // As that release's settlement wrote it: the webhook row alone, claimed by its own relay.
    await client.query(
      `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, status, relay_claimed_until)
       VALUES ('evt_old_code', 'iss_one', 'qualified_settlement', 'txn_old', 'k:old', '{}', 'delivering', now() + interval '10 seconds')`,
    );
    const { rows } = await client.query(
      `SELECT w.relayed_at IS NOT NULL AS relayed, d.status, d.relayed_at FROM webhook w
         JOIN webhook_delivery d ON d.webhook_id = w.id WHERE w.id = 'evt_old_code'`,
    );
    assert.deepEqual(rows, [{ relayed: true, status: 'pending', relayed_at: null }], 'for this release to deliver');
    await client.query(
      `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data)
       VALUES ('evt_no_subscriber', 'iss_one', 'qualified_auth', 'auth_old', 'k:auth', '{}')`,
    );
    const none = await client.query(
      `SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = 'evt_no_subscriber'`,
    );
    assert.equal(none.rows[0].n, 0, 'no endpoint subscribes to qualified_auth');
  });

  it('keeps attempts unique per delivery and number, the endpointless ones included', async () => {
    await assert.rejects(
      client.query(
        `INSERT INTO webhook_attempt (id, webhook_id, attempt_number, started_at, latency_ms, outcome)
         VALUES ('dup', 'evt_nowhere', 1, now(), 1, 'succeeded')`,
      ),
      /webhook_attempt_delivery_number_key/,
    );
  });

  it('lets an issuer have several endpoints and the webhook table hold endpoint_disabled', async () => {
    await client.query(
      `INSERT INTO webhook_endpoint (id, issuer_id, url, enabled_types, secret_key_id, secret_ciphertext)
       VALUES ('whe_second', 'iss_one', 'https://hooks.example.com/x', '{endpoint_disabled}', 'k1', ${sealed})`,
    );
    await client.query(
      `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data)
       VALUES ('evt_d', 'iss_one', 'endpoint_disabled', 'whe_second', 'endpoint_disabled:x', '{}')`,
    );
    await assert.rejects(
      client.query(`UPDATE webhook_endpoint SET status = 'disabled' WHERE id = 'whe_second'`),
      /webhook_endpoint_status_check/,
      'disabled needs a reason and a time',
    );
  });
});
