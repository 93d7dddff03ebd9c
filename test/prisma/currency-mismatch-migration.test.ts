// Migration 20261125000000_currency_mismatch on a database written before ingestion refused
// refunds and settlements in another currency than the event they name: its data step reports
// them (count and ids, kept in _prisma_migrations.logs) and rewrites nothing.
import assert from 'node:assert/strict';
import pg from 'pg';
import { migrate, type MigrationResult } from '../../prisma/migrate';
import { databaseBefore } from '../helpers/databases';

const MIGRATION = '20261125000000_currency_mismatch';

describe(`prisma/migrations: ${MIGRATION}`, function () {
  this.timeout(60_000);
  let url: string;
  let client: pg.Client;
  let result: MigrationResult;

  before(async () => {
    url = await databaseBefore('currency_mismatch', MIGRATION);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO issuer (id, name, environment) VALUES ('iss_m', 'Old issuer', 'sandbox')`);
    const event = (e: { id: string; kind: string; state: string; currency: string; auth?: string; related?: string }) =>
      client.query(
        `INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
                card_id, amount_minor, currency, event_created_at, authorization_external_id, related_event_id, workflow_id,
                reward_status)
         VALUES ($1, 'iss_m', $2, $1, 'f', $3, '{}', 'chg_m', 'ch_m', 'card_m', 1000, $4, now(), $5, $6, 'txn/iss_m/' || $1, 'matched')`,
        [e.id, e.kind, e.state, e.currency, e.auth ?? null, e.related ?? null],
      );
    await event({ id: 'txn_usd', kind: 'settled', state: 'settled', currency: 'usd' });
    await event({ id: 'txn_jpy_refund', kind: 'settled', state: 'refunded', currency: 'jpy', related: 'txn_usd' });
    await event({ id: 'txn_usd_refund', kind: 'settled', state: 'refunded', currency: 'usd', related: 'txn_usd' });
    await event({ id: 'auth_usd', kind: 'auth', state: 'approved', currency: 'usd' });
    await event({ id: 'txn_eur_settlement', kind: 'settled', state: 'settled', currency: 'eur', auth: 'auth_usd' });
    result = await migrate(url);
  });
  after(async () => {
    await client?.end();
  });

  it('reports each mismatched refund and settlement, and nothing else', () => {
    assert.equal(result.reports.length, 1);
    const { migration, report } = result.reports[0];
    assert.equal(migration, MIGRATION);
    assert.match(report, /^2 stored event\(s\) .* \(1 refund\(s\), 1 settlement\(s\)\)/);
    assert.match(report, /txn_jpy_refund/);
    assert.match(report, /txn_eur_settlement/);
    assert.doesNotMatch(report, /txn_usd_refund/);
  });

  it('keeps the report with the migration and rewrites no event', async () => {
    const { rows } = await client.query(`SELECT logs FROM "_prisma_migrations" WHERE migration_name = $1`, [MIGRATION]);
    assert.equal(rows[0].logs, result.reports[0].report);
    const statuses = await client.query(`SELECT DISTINCT reward_status FROM ingested_event`);
    assert.deepEqual(statuses.rows, [{ reward_status: 'matched' }]);
  });

  it('reports nothing on a database without mismatches', async () => {
    const clean = await databaseBefore('currency_mismatch_clean', MIGRATION);
    const cleanResult = await migrate(clean);
    assert.ok(cleanResult.applied.includes(MIGRATION));
    assert.deepEqual(cleanResult.reports, []);
  });
});
