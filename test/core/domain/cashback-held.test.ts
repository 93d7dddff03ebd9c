// The running total of what a group has on hold (core/domain/cashback-held.ts, migration
// 20261202120000_cashback_held_totals) against the sum it replaces, on the real PostgreSQL: every
// writer of cashback_hold moves it (the settlement's batch insert, a refund's release, a claim's
// upsert that adds to a hold and moves its date, a delete), the sweep takes matured holds out of
// it, and the amount read at ANY instant (before the last sweep, between holds, years ahead as a
// sandbox clock may be) equals the sum of remaining_minor of the holds payable after it. Then the
// races: a writer blocked by a sweep, a rebuild blocked by a writer. The ledger invariant that
// every money test ends with reports a total that disagrees.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createDb, type Db } from '../../../prisma/client';
import { testDatabaseUrl } from '../../helpers/env';
import { assertLedgerHealthy, chgId, DAY_MS, ledgerIssuer } from '../../helpers/ledger';
import { ledgerInvariants } from '../../../core/domain/ledger';
import { heldAtSql, sweepMaturedHolds } from '../../../core/domain/cashback-held';

const T0 = Date.parse('2026-06-01T12:00:00.000Z');
const day = (n: number) => new Date(T0 + n * DAY_MS);

describe('core/domain/cashback-held: the running total of what a group has on hold', function () {
  this.timeout(60_000);
  let db: Db;
  let client: pg.Client;
  let other: pg.Client;

  before(async () => {
    db = createDb(testDatabaseUrl(), 5);
    client = new pg.Client({ connectionString: testDatabaseUrl() });
    other = new pg.Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    await other.connect();
  });
  after(async () => {
    await client?.end();
    await other?.end();
    await db?.$disconnect();
  });

  /** A settled purchase row for a hold to refer to; returns its id. */
  async function purchase(issuerId: string, chg: string): Promise<string> {
    const id = `txn_${randomUUID()}`;
    await client.query(
      `INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
         card_id, amount_minor, currency, event_created_at, workflow_id)
       VALUES ($1, $2, 'settled', $1, 'f', 'settled', '{}', $3, 'ch', 'card', 10000, 'usd', now(), 'txn/' || $1)`,
      [id, issuerId, chg],
    );
    return id;
  }

  interface Hold {
    id: string;
    chg: string;
    minor: number;
    payable: Date;
  }

  /** Holds written as the settlement's batch writes them: many, several groups, in one statement (a CTE). */
  async function settle(issuerId: string, holds: Hold[], c: pg.ClientBase = client): Promise<void> {
    await c.query(
      `WITH holds AS (
         INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at)
         SELECT x.txn, $1, x.chg, x.amount, x.amount, x.payable
           FROM unnest($2::text[], $3::text[], $4::bigint[], $5::timestamptz[]) AS x(txn, chg, amount, payable)
         RETURNING 1)
       SELECT count(*) FROM holds`,
      [
        issuerId,
        holds.map((h) => h.id),
        holds.map((h) => h.chg),
        holds.map((h) => h.minor),
        holds.map((h) => h.payable),
      ],
    );
  }

  /** A refund's release, as activities/lifecycle/refund.ts writes it. */
  const release = (txn: string, clawedMinor: number, c: pg.ClientBase = client) =>
    c.query(
      `UPDATE cashback_hold SET remaining_minor = remaining_minor - LEAST(remaining_minor, $2), updated_at = now()
        WHERE transaction_id = $1`,
      [txn, clawedMinor],
    );

  /** A claim's approval: adds to the purchase's hold (or creates it), optionally with a new date. */
  const claimUpsert = (issuerId: string, h: Hold, moveTo?: Date) =>
    client.query(
      `INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at)
       VALUES ($1, $2, $3, $4, $4, $5)
       ON CONFLICT (transaction_id) DO UPDATE
         SET amount_minor = cashback_hold.amount_minor + EXCLUDED.amount_minor,
             remaining_minor = cashback_hold.remaining_minor + EXCLUDED.remaining_minor,
             payable_at = coalesce($6, cashback_hold.payable_at)`,
      [h.id, issuerId, h.chg, h.minor, h.payable, moveTo ?? null],
    );

  /** The sum the total replaces: remaining value of the group's holds payable after `at`. */
  async function summed(issuerId: string, chg: string, at: Date): Promise<number> {
    const { rows } = await client.query<{ held: string }>(
      `SELECT coalesce(sum(remaining_minor), 0)::text AS held FROM cashback_hold
        WHERE issuer_id = $1 AND chg_id = $2 AND payable_at > $3`,
      [issuerId, chg, at],
    );
    return Number(rows[0].held);
  }

  async function heldAt(issuerId: string, chg: string, at: Date): Promise<number> {
    const { rows } = await client.query<{ held: string }>(
      `SELECT (${heldAtSql('$1::text', '$2::text', '$3::timestamptz')})::text AS held`,
      [issuerId, chg, at],
    );
    return Number(rows[0].held);
  }

  /** Instants around every hold's date (just before, at, just after), far before and years after. */
  async function instantsOf(issuerId: string): Promise<Date[]> {
    const { rows } = await client.query<{ payable: Date }>(
      `SELECT DISTINCT payable_at AS payable FROM cashback_hold WHERE issuer_id = $1`,
      [issuerId],
    );
    const around = rows.flatMap((r) => [-1, 0, 1].map((ms) => new Date(r.payable.getTime() + ms)));
    return [day(-3650), day(-1), day(0), ...around, day(400), day(20 * 365)];
  }

  /** The total read at every instant equals the sum, for every group of the issuer; the invariant holds. */
  async function assertAgrees(issuerId: string, chgs: string[]): Promise<void> {
    for (const at of await instantsOf(issuerId))
      for (const chg of chgs)
        assert.equal(await heldAt(issuerId, chg, at), await summed(issuerId, chg, at), `${chg} at ${at.toISOString()}`);
    await assertLedgerHealthy(db, issuerId);
  }

  async function totalOf(issuerId: string, chg: string) {
    const { rows } = await client.query<{ held: string; through: Date; next: Date | null }>(
      `SELECT held_minor::text AS held, matured_through AS through, next_payable_at AS next FROM cashback_held
        WHERE issuer_id = $1 AND chg_id = $2`,
      [issuerId, chg],
    );
    return rows[0] && { held: Number(rows[0].held), through: rows[0].through, next: rows[0].next };
  }

  it('moves with every writer and agrees with the sum at any instant, before and after each sweep', async () => {
    const issuerId = await ledgerIssuer(db);
    const [a, b] = [chgId(), chgId()];
    const hold = async (chg: string, minor: number, payableDay: number): Promise<Hold> => ({
      id: await purchase(issuerId, chg),
      chg,
      minor,
      payable: day(payableDay),
    });
    // A settlement batch: two groups, one hold already payable (a 0-day window), two on one date.
    const holds = [
      await hold(a, 500, 30),
      await hold(a, 200, 0),
      await hold(a, 300, 60),
      await hold(b, 400, 30),
      await hold(b, 100, 30),
    ];
    await settle(issuerId, holds);
    await assertAgrees(issuerId, [a, b]);

    // Refunds: a partial release, a full one, one past what is left (the release stops at 0).
    await release(holds[0].id, 250);
    await release(holds[3].id, 400);
    await release(holds[4].id, 1_000);
    await assertAgrees(issuerId, [a, b]);

    // A claim adds to a purchase's hold, creates another, and moves one's date into the future.
    await claimUpsert(issuerId, { ...holds[2], minor: 50 });
    const claimed = await hold(b, 70, 45);
    await claimUpsert(issuerId, claimed);
    await claimUpsert(issuerId, { ...holds[1], minor: 25 }, day(35));
    await assertAgrees(issuerId, [a, b]);

    // The sweep to day 31 takes out what matured by then, from each group; readers agree on both
    // sides of it (a payout's asOf may be before the last sweep).
    await sweepMaturedHolds(db, { nowMs: day(31).getTime(), issuerId });
    assert.deepEqual(await totalOf(issuerId, a), { held: 350 + 225, through: day(31), next: day(35) });
    assert.deepEqual(await totalOf(issuerId, b), { held: 70, through: day(31), next: day(45) });
    await assertAgrees(issuerId, [a, b]);

    // Writes after the sweep: a refund of a matured hold, a hold that is already payable, one
    // ahead; then a sweep years ahead (a sandbox clock) leaves nothing held.
    await release(holds[0].id, 250);
    await settle(issuerId, [await hold(a, 80, 10), await hold(b, 90, 90)]);
    await assertAgrees(issuerId, [a, b]);
    await sweepMaturedHolds(db, { nowMs: day(3650).getTime(), issuerId });
    assert.deepEqual(await totalOf(issuerId, b), { held: 0, through: day(3650), next: null });
    await assertAgrees(issuerId, [a, b]);

    // A deleted hold leaves the total as well.
    await client.query(`DELETE FROM cashback_hold WHERE transaction_id = $1`, [claimed.id]);
    await assertAgrees(issuerId, [a, b]);
  });

  it("sweeps each issuer to its own clock: a sandbox issuer's far ahead of real time", async () => {
    const issuerId = await ledgerIssuer(db);
    const chg = chgId();
    await client.query(`UPDATE issuer SET clock_offset_ms = $2 WHERE id = $1`, [issuerId, 400 * DAY_MS]);
    const now = Date.now();
    const txns = [await purchase(issuerId, chg), await purchase(issuerId, chg)];
    // Payable 100 days from real now (long past on the issuer's clock), and 500 days on.
    await settle(issuerId, [
      { id: txns[0], chg, minor: 700, payable: new Date(now + 100 * DAY_MS) },
      { id: txns[1], chg, minor: 300, payable: new Date(now + 500 * DAY_MS) },
    ]);
    const { swept } = await sweepMaturedHolds(db, { nowMs: now, issuerId });
    assert.equal(swept, 1);
    const total = await totalOf(issuerId, chg);
    assert.equal(total?.held, 300);
    assert.equal(total?.through.getTime(), now + 400 * DAY_MS);
    assert.equal(await heldAt(issuerId, chg, new Date(now + 400 * DAY_MS)), 300);
    // An instant before the sweep (a payout created before the clock moved) still holds both.
    assert.equal(await heldAt(issuerId, chg, new Date(now + 50 * DAY_MS)), 1000);
    await assertLedgerHealthy(db, issuerId);
  });

  it('counts a hold written while a sweep holds its group exactly once', async () => {
    const issuerId = await ledgerIssuer(db);
    const chg = chgId();
    await settle(issuerId, [{ id: await purchase(issuerId, chg), chg, minor: 100, payable: day(5) }]);
    const late = await purchase(issuerId, chg);
    await other.query('BEGIN');
    try {
      // The sweep to day 10 holds the group's row; the settlement of a hold payable on day 8 waits for it.
      await other.query(`SELECT cashback_held_sweep($1, $2, 10)`, [issuerId, day(10)]);
      const writing = settle(issuerId, [{ id: late, chg, minor: 40, payable: day(8) }]);
      await waitForLockWait(issuerId);
      await other.query('COMMIT');
      await writing;
    } catch (err) {
      await other.query('ROLLBACK');
      throw err;
    }
    assert.deepEqual(await totalOf(issuerId, chg), { held: 0, through: day(10), next: null });
    await assertAgrees(issuerId, [chg]);
  });

  it("rebuilds every total from its holds, waiting for a writer's transaction", async () => {
    const issuerId = await ledgerIssuer(db);
    const chg = chgId();
    const txn = await purchase(issuerId, chg);
    // Payable after real now: the rebuild takes out what matured by then.
    await settle(issuerId, [{ id: txn, chg, minor: 600, payable: new Date(Date.now() + 30 * DAY_MS) }]);
    // A total that disagrees is reported by the invariant every money test ends with.
    await client.query(`UPDATE cashback_held SET held_minor = held_minor + 1 WHERE issuer_id = $1`, [issuerId]);
    const violations = await ledgerInvariants(db, { issuerId });
    assert.deepEqual(
      violations.map((v) => [v.invariant, v.subject]),
      [['held total equals the remaining value of its holds not yet matured', `${issuerId} ${chg}`]],
    );
    // A refund's transaction holds the group while the rebuild runs; the rebuild counts it once committed.
    await other.query('BEGIN');
    try {
      await release(txn, 200, other);
      const rebuilding = client.query('CALL cashback_held_rebuild(1000)');
      await waitForLockWait(issuerId);
      await other.query('COMMIT');
      await rebuilding;
    } catch (err) {
      await other.query('ROLLBACK');
      throw err;
    }
    assert.equal((await totalOf(issuerId, chg))?.held, 400);
    await assertAgrees(issuerId, [chg]);
  });

  /** Until a session waits for a lock (the writer or the rebuild blocked on the issuer's total). */
  async function waitForLockWait(issuerId: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const rows = await db.$queryRawUnsafe<Array<{ n: number }>>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
      );
      if (rows.length > 0 && rows[0].n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`nothing waited for the transaction holding ${issuerId}'s total`);
  }
});
