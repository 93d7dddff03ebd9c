// Migration 20261124100000_typed_markers on a database written by the code before it: shortfall
// clawbacks, found until then by their idempotency key's suffix, are marked; webhook attempts get
// the class their error text started with; reward events stay immutable afterwards.
import assert from 'node:assert/strict';
import pg from 'pg';
import { migrate } from '../../prisma/migrate';
import { databaseBefore } from '../helpers/databases';

const MIGRATION = '20261124100000_typed_markers';

describe(`prisma/migrations: ${MIGRATION}`, function () {
  this.timeout(60_000);
  let url: string;
  let client: pg.Client;

  before(async () => {
    url = await databaseBefore('typed_markers', MIGRATION);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO issuer (id, name, environment) VALUES ('iss_m', 'Old issuer', 'sandbox')`);
    const event = (id: string, type: string, key: string) =>
      client.query(
        `INSERT INTO reward_event (id, issuer_id, chg_id, type, amount_minor, idempotency_key, description, occurred_at)
         VALUES ($1, 'iss_m', 'chg_m', $2, 100, $3, 'old', now())`,
        [id, type, key],
      );
    await event('brevt_shortfall', 'cashback_clawed_back', 'refund:txn_r:branded_shortfall_from_cashback');
    await event('brevt_cashback', 'cashback_clawed_back', 'refund:txn_r:cashback_clawed_back');
    await event('brevt_earned', 'cashback_earned', 'settle:txn_p:cashback_earned');
    await client.query(
      `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, status, created_at, updated_at)
       VALUES ('evt_m', 'iss_m', 'qualified_settlement', 'txn_p', 'k-evt_m', '{}', 'failed', now(), now())`,
    );
    const attempt = (n: number, outcome: string, error: string | null) =>
      client.query(
        `INSERT INTO webhook_attempt (id, webhook_id, attempt_number, started_at, status_code, latency_ms, outcome, error)
         VALUES ($1, 'evt_m', $2, now(), NULL, 0, $3, $4)`,
        [`evt_m/attempt/${n}`, n, outcome, error],
      );
    await attempt(1, 'succeeded', null);
    await attempt(2, 'failed', 'destination_refused: 10.0.0.1 is private; nothing was sent');
    await attempt(3, 'failed', 'http_status: receiver answered 500');
    await migrate(url);
  });
  after(async () => {
    await client?.end();
  });

  it('marks exactly the shortfall clawbacks', async () => {
    const { rows } = await client.query(`SELECT id, covers_branded_shortfall AS marked FROM reward_event ORDER BY id`);
    assert.deepEqual(rows, [
      { id: 'brevt_cashback', marked: false },
      { id: 'brevt_earned', marked: false },
      { id: 'brevt_shortfall', marked: true },
    ]);
  });

  it('gives every attempt with an error the class its text starts with', async () => {
    const { rows } = await client.query(
      `SELECT attempt_number AS n, error_class AS class FROM webhook_attempt ORDER BY 1`,
    );
    assert.deepEqual(rows, [
      { n: 1, class: null },
      { n: 2, class: 'destination_refused' },
      { n: 3, class: 'http_status' },
    ]);
  });

  it('leaves reward events immutable and the marker on clawbacks only', async () => {
    await assert.rejects(
      client.query(`UPDATE reward_event SET covers_branded_shortfall = false WHERE id = 'brevt_shortfall'`),
      /reward events are immutable/,
    );
    await assert.rejects(
      client.query(
        `INSERT INTO reward_event (id, issuer_id, chg_id, type, amount_minor, idempotency_key, description, occurred_at, covers_branded_shortfall)
         VALUES ('brevt_bad', 'iss_m', 'chg_m', 'cashback_earned', 1, 'k-bad', 'x', now(), true)`,
      ),
      /reward_event_shortfall_type_check/,
    );
  });
});
