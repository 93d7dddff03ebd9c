// The backlog gate's reading of an issuer's waiting events (api/ingestion/backlog.ts) against
// PostgreSQL: one count for the requests that need one at the same moment, never a wait for a
// count an accepted request does not need, and a fresh count before a refusal. A table lock held
// by the test is what keeps a count waiting, so pg_stat_activity shows how many were sent.
import assert from 'node:assert/strict';
import { newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { countStandsForMs, createBacklogGate } from '../../api/ingestion/backlog';
import { createLogger } from '../../core/logger';
import { sqlTransaction } from '../../prisma/sql-transaction';
import { ApiError } from '../../core/errors';

describe('ingestion backlog gate (its counts of waiting events)', function () {
  this.timeout(60_000);
  let app: TestApp;
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');

  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  /** An issuer with `waiting` events accepted and not handed over (the test app hands nothing over). */
  async function issuerWaiting(waiting: number): Promise<TestIssuer> {
    const issuer = await newIssuer(app);
    const card = cardOf((await issuer.call('POST', '/api/v2/chg', groupBody())).body);
    const events = Array.from({ length: waiting }, () => settledEvent(card));
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', events)).status, 204);
    return issuer;
  }

  /** Counts of waiting events sent and held by the lock (the test runs alone on its database). */
  const countsWaiting = async () => {
    const [{ n }] = await app.db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'
         AND query LIKE '%FROM handover_pending WHERE issuer_id = $1 AND admitted_at IS NULL%'`;
    return n;
  };

  /** Runs `fn` while a transaction holds handover_pending locked against every read. */
  async function whileLocked(fn: () => Promise<void>): Promise<void> {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = sqlTransaction(app.db, async (tx) => {
      await tx.$executeRaw`LOCK TABLE handover_pending IN ACCESS EXCLUSIVE MODE`;
      locked();
      await released;
    });
    await isLocked;
    try {
      await fn();
    } finally {
      release();
      await holder;
    }
  }

  async function untilCountsWait(): Promise<number> {
    for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 10))) {
      assert.ok(Date.now() < deadline, 'no count came to wait for the lock');
      const n = await countsWaiting();
      if (n > 0) return n;
    }
  }

  const staleAfter = () => new Promise((r) => setTimeout(r, countStandsForMs(0) + 100));

  const refusal = (check: Promise<void>) =>
    check.then(
      () => 'accepted',
      (err: unknown) => (err instanceof ApiError ? (err.reasonCode ?? err.message) : `failed: ${String(err)}`),
    );

  it('reads a long backlog less often, in proportion to its length, and a short one every second', () => {
    assert.equal(countStandsForMs(0), 1_000);
    assert.equal(countStandsForMs(50_000), 1_000);
    assert.equal(countStandsForMs(100_000), 2_000);
    assert.equal(countStandsForMs(300_000), 6_000);
  });

  it('answers an accepted request on the count it has while a stale one is read again', async () => {
    const issuer = await issuerWaiting(2);
    const gate = createBacklogGate(app.db, 100_000, logger);
    await gate.check({ id: issuer.id, ingestionBacklogLimit: 5 });
    await staleAfter();
    await whileLocked(async () => {
      // Answered while its count waits behind the lock.
      await gate.check({ id: issuer.id, ingestionBacklogLimit: 5 });
      assert.equal(await untilCountsWait(), 1);
    });
  });

  it('sends one count for the requests that need it at once, and refuses on it', async () => {
    const issuer = await issuerWaiting(2);
    const gate = createBacklogGate(app.db, 100_000, logger);
    let checks: Array<Promise<string>> = [];
    await whileLocked(async () => {
      // An issuer's first requests: none is decided before its count.
      checks = Array.from({ length: 10 }, () => refusal(gate.check({ id: issuer.id, ingestionBacklogLimit: 2 })));
      assert.equal(await untilCountsWait(), 1, 'one count for ten requests');
      let decided = false;
      void Promise.race(checks).then(() => (decided = true));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(decided, false, 'no request decided before the count');
    });
    assert.deepEqual(await Promise.all(checks), Array(10).fill('backlog_full'));
  });
});
