// Migrations 20261202120000_cashback_held_totals, 20261202120050_cashback_held_rows_from_holds and
// 20261202120100_cashback_held_backfill on a database written by the code before them: a refund
// of an older purchase between the triggers and the backfill (the previous release still running)
// starts its group's total from the group's holds; the backfill gives every group its total (what
// is still in its window, as of the migration), fully refunded and matured holds in the rows but
// not in the totals; and a hold written after the migrations moves them.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../../prisma/migrate';
import { databaseBefore } from '../helpers/databases';

const MIGRATION = '20261202120000_cashback_held_totals';
const BACKFILL = '20261202120100_cashback_held_backfill';

/** The repository's migrations before `name`, in a folder of their own. */
function migrationsBefore(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'migrations-before-'));
  for (const m of listMigrations().filter((m) => m.name < name))
    cpSync(join(MIGRATIONS_DIR, m.name), join(dir, m.name), { recursive: true });
  return dir;
}
const DAY_MS = 86_400_000;

describe(`prisma/migrations: ${MIGRATION} and its backfill`, function () {
  this.timeout(60_000);
  let client: pg.Client;
  let applied: string[];
  let windowTotals: Array<Array<string | number | null>>;
  const inDays = (days: number) => new Date(Date.now() + days * DAY_MS);

  const purchase = (id: string, chg: string) =>
    client.query(
      `INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
         card_id, amount_minor, currency, event_created_at, workflow_id)
       VALUES ($1, 'iss_m', 'settled', $1, 'f', 'settled', '{}', $2, 'ch_m', 'card_m', 10000, 'usd', now(), 'txn/iss_m/' || $1)`,
      [id, chg],
    );
  const hold = (id: string, chg: string, amount: number, remaining: number, payableAt: Date) =>
    client.query(
      `INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at)
       VALUES ($1, 'iss_m', $2, $3, $4, $5)`,
      [id, chg, amount, remaining, payableAt],
    );

  before(async () => {
    const url = await databaseBefore('cashback_held', MIGRATION);
    client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO issuer (id, name, environment) VALUES ('iss_m', 'Old issuer', 'production')`);
    const rows: Array<[string, string, number, number, number]> = [
      ['t1', 'chg_a', 500, 500, 20],
      ['t2', 'chg_a', 300, 100, 5],
      ['t3', 'chg_a', 200, 200, -3],
      ['t4', 'chg_b', 400, 0, 25],
      ['t5', 'chg_c', 100, 100, -40],
    ];
    for (const [id, chg, amount, remaining, days] of rows) {
      await purchase(id, chg);
      await hold(id, chg, amount, remaining, inDays(days));
    }
    // The triggers, not yet the backfill: the previous release refunds an older purchase.
    applied = (await migrate(url, { dir: migrationsBefore(BACKFILL) })).applied;
    await client.query(`UPDATE cashback_hold SET remaining_minor = remaining_minor - 100 WHERE transaction_id = 't1'`);
    windowTotals = await totals();
    applied.push(...(await migrate(url)).applied);
  });
  after(async () => {
    await client?.end();
  });

  const totals = async () =>
    (
      await client.query<{ chg: string; held: string; next: Date | null }>(
        `SELECT chg_id AS chg, held_minor::text AS held, next_payable_at AS next FROM cashback_held ORDER BY chg_id`,
      )
    ).rows.map((r) => [r.chg, Number(r.held), r.next?.getTime() ?? null]);

  it('applies the three, the backfill last and outside a transaction', () => {
    assert.deepEqual(applied.slice(0, 3), [MIGRATION, '20261202120050_cashback_held_rows_from_holds', BACKFILL]);
  });

  it("starts a group's total from its holds when a write meets holds older than the triggers", () => {
    // Every hold of chg_a counts (the total starts before any sweep): 400 + 100 + 200.
    assert.deepEqual(
      windowTotals.map((t) => t.slice(0, 2)),
      [['chg_a', 700]],
    );
  });

  it("writes each group's total from its holds still in their window", async () => {
    const next = async (id: string) =>
      (
        await client.query<{ at: Date }>(`SELECT payable_at AS at FROM cashback_hold WHERE transaction_id = $1`, [id])
      ).rows[0].at.getTime();
    assert.deepEqual(await totals(), [
      ['chg_a', 500, await next('t2')],
      ['chg_b', 0, null],
      ['chg_c', 0, null],
    ]);
  });

  it('moves the totals with holds written after it', async () => {
    await purchase('t6', 'chg_b');
    await hold('t6', 'chg_b', 70, 70, inDays(30));
    await client.query(`UPDATE cashback_hold SET remaining_minor = 0 WHERE transaction_id = 't1'`);
    const [a, b] = await totals();
    assert.deepEqual([a[1], b[1]], [100, 70]);
  });
});
