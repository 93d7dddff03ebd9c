// Migration 20261125100000_reward_notices on a database written before reward events existed:
// the issuer gets the default lead times; an endpoint keeps exactly the types it had (so no
// receiver gets a type it never chose); the grants that hold value are planned for the first
// scan, a grant already spendable counts as announced, and a spent or expired grant is left
// alone; the webhook table accepts the new types.
import assert from 'node:assert/strict';
import pg from 'pg';
import { migrate } from '../../prisma/migrate';
import { databaseBefore } from '../helpers/databases';

const MIGRATION = '20261125100000_reward_notices';
const DAY_MS = 86_400_000;

describe(`prisma/migrations: ${MIGRATION}`, function () {
  this.timeout(60_000);
  let client: pg.Client;
  const now = Date.now();
  /** When the migration ran: it dates "at once" with the database's now(). */
  let migrated: { from: number; to: number };
  const at = (days: number) => new Date(now + days * DAY_MS);

  before(async () => {
    const url = await databaseBefore('reward_notices', MIGRATION);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO issuer (id, name, environment) VALUES ('iss_m', 'Old issuer', 'production')`);
    await client.query(
      `INSERT INTO webhook_endpoint (issuer_id, url, enabled_types, secret_key_id, secret_ciphertext)
       VALUES ('iss_m', 'https://hooks.example.com/w', '{qualified_auth,qualified_settlement}', 'k1', decode(repeat('ab', 40), 'hex'))`,
    );
    // Grants alone: replica mode skips the foreign keys to their ledger rows, which this
    // migration does not read.
    await client.query(`SET session_replication_role = replica`);
    const grant = (id: string, remaining: number, availableAt: Date, expiresAt: Date) =>
      client.query(
        `INSERT INTO reward_grant (id, issuer_id, chg_id, merchant_id, account_id, earn_transfer_id, amount_minor,
                                   remaining_minor, available_at, expires_at)
         VALUES ($1, 'iss_m', 'chg_m', 'mp_m', 'acc', 'tr_' || $1, 100, $2, $3, $4)`,
        [id, remaining, availableAt, expiresAt],
      );
    await grant('rg_pending', 100, at(2), at(60));
    await grant('rg_available', 40, at(-5), at(20));
    await grant('rg_spent', 0, at(-5), at(20));
    await grant('rg_expired', 100, at(-40), at(-1));
    await client.query(`SET session_replication_role = DEFAULT`);
    const from = Date.now();
    await migrate(url);
    migrated = { from, to: Date.now() };
  });
  after(async () => {
    await client?.end();
  });

  it('gives issuers the default lead times and keeps every endpoint to its old types', async () => {
    const issuer = await client.query(`SELECT expiry_notice_days FROM issuer WHERE id = 'iss_m'`);
    assert.deepEqual(issuer.rows[0].expiry_notice_days, [30, 7]);
    const endpoint = await client.query(`SELECT enabled_types FROM webhook_endpoint WHERE issuer_id = 'iss_m'`);
    assert.deepEqual(endpoint.rows[0].enabled_types, ['qualified_auth', 'qualified_settlement']);
  });

  it('plans the grants that hold value for the first scan, and no others', async () => {
    const { rows } = await client.query(
      `SELECT id, available_noticed_at, expiry_noticed_days, next_notice_at FROM reward_grant ORDER BY id`,
    );
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    assert.equal(byId.rg_pending.next_notice_at.getTime(), at(2).getTime(), 'due when it becomes spendable');
    assert.equal(byId.rg_pending.available_noticed_at, null);
    const due = byId.rg_available.next_notice_at.getTime();
    assert.ok(due >= migrated.from - 1_000 && due <= migrated.to + 1_000, 'due at once: when the migration ran');
    assert.equal(byId.rg_available.available_noticed_at.getTime(), at(-5).getTime(), 'spendable before: announced');
    for (const id of ['rg_spent', 'rg_expired']) assert.equal(byId[id].next_notice_at, null, id);
    assert.ok(rows.every((r) => r.expiry_noticed_days === null));
  });

  it('lets the webhook table hold the new types', async () => {
    await client.query(
      `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data)
       VALUES ('evt_m', 'iss_m', 'reward_expiring', 'rg_available', 'reward_expiring:rg_available:7', '{}')`,
    );
    await assert.rejects(
      client.query(
        `INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data)
         VALUES ('evt_n', 'iss_m', 'reward_invented', 'x', 'x', '{}')`,
      ),
      /webhook_type_check/,
    );
  });
});
