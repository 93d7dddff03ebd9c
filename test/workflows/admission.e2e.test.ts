// Admission control at the hand-over (docs/decisions/0037-admission-at-the-hand-over.md) on the
// real stack: the API, the worker with its hand-over watch, PostgreSQL and the dev server. Never
// more purchase workflows running (started and not closed) than HANDOVER_MAX_IN_FLIGHT; the waiting
// events of each issuer processed in order of arrival, and issuers taken in turn; the queue
// reported by issuer in the watch's gauges.
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { startTestApp, type TestIssuer } from '../helpers/app';
import { settledEvent, type CardRef } from '../helpers/events';
import { activate, groupWithCard, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { freePort } from '../helpers/ports';
import { testEngine } from '../helpers/engine';
import { createLogger } from '../../core/logger';
import { startHandoverWatch } from '../../worker/handover-watch';
import { handoverOldestSeconds, handoverWaitingEvents } from '../../core/metrics';
import { maxOverlap } from '../../bench/intervals';

interface Shopper {
  issuer: TestIssuer;
  card: CardRef;
}

describe('admission at the hand-over', function () {
  this.timeout(180_000);
  let merchantId: string;

  /** An issuer of its own whose group has activated the catalogue's merchant. */
  async function shopper(stack: Stack): Promise<Shopper> {
    const issuer = await issuerWith(stack.app);
    const { group, card } = await groupWithCard(issuer);
    await activate(issuer, group.id, merchantId);
    return { issuer, card };
  }

  /** The merchant every shopper buys from: 1 % cashback. */
  async function catalogue(stack: Stack): Promise<void> {
    merchantId = (await merchantWithOffer(stack.app, { offer: { cashbackRateBps: 100 } })).merchant.id;
  }

  /**
   * The suite's files share one database, in which events that other files stored without a
   * hand-over still wait; this stack's watch, under a bound of a few, would hand those over first,
   * a few at a time. They belong to files that have finished: cleared.
   */
  const clearLeftovers = (stack: Stack) => stack.db.handoverPending.deleteMany({});

  const stored = (stack: Stack, issuerIds: string[]) =>
    stack.db.ingestedEvent.findMany({
      where: { issuerId: { in: issuerIds } },
      select: { id: true, issuerId: true, workflowId: true, receivedAt: true, processedAt: true, rewardStatus: true },
      orderBy: [{ receivedAt: 'asc' }, { id: 'asc' }],
    });

  /**
   * Each purchase's run from its start to its close, both on Temporal's clock. A place is given
   * back only once the workflow has gone idle, so the closes count too.
   */
  async function runningIntervals(stack: Stack, rows: Array<{ workflowId: string }>) {
    const running: Array<[number, number]> = [];
    for (const row of rows) {
      const described = await stack.client.workflow.getHandle(row.workflowId).describe();
      assert.ok(described.closeTime, `${row.workflowId} closed`);
      running.push([described.startTime.getTime(), described.closeTime.getTime()]);
    }
    return running;
  }

  async function waitProcessed(stack: Stack, issuerIds: string[]) {
    for (const row of await stored(stack, issuerIds))
      assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES, 120_000), 'matched');
    return stored(stack, issuerIds);
  }

  describe('with at most 3 purchases in flight', () => {
    let stack: Stack;
    before(async () => {
      stack = await startStack({ handoverMaxInFlight: 3, handoverWatch: { intervalMs: 500, busyIntervalMs: 50 } });
      await clearLeftovers(stack);
      await catalogue(stack);
    });
    after(() => stack.stop());

    it('never has more purchases handed to Temporal and not yet finished than the bound', async () => {
      const a = await shopper(stack);
      const b = await shopper(stack);
      const batch = (s: Shopper, n: number) => Array.from({ length: n }, () => settledEvent(s.card, { merchantId }));
      const answers = await Promise.all([
        a.issuer.call('POST', '/api/v1/incoming-txn', batch(a, 20)),
        b.issuer.call('POST', '/api/v1/incoming-txn', batch(b, 5)),
        a.issuer.call('POST', '/api/v1/incoming-txn', batch(a, 5)),
      ]);
      assert.deepEqual(
        answers.map((r) => r.status),
        [204, 204, 204],
      );
      const rows = await waitProcessed(stack, [a.issuer.id, b.issuer.id]);
      await stack.waitUntilReleased(rows.map((r) => r.id));
      const most = maxOverlap(await runningIntervals(stack, rows));
      assert.ok(most <= 3, `at most 3 workflows running, found ${most}`);
      assert.ok(most >= 2, `the bound is used, not one at a time: ${most}`);
      await assertLedgerHealthy(stack.db, a.issuer.id);
    });
  });

  describe('with one purchase in flight at a time', () => {
    let stack: Stack;
    before(async () => {
      stack = await startStack({ handoverMaxInFlight: 1, handoverWatch: { intervalMs: 500, busyIntervalMs: 20 } });
      await clearLeftovers(stack);
      await catalogue(stack);
    });
    after(() => stack.stop());

    it("processes each issuer's waiting events in order of arrival, issuers in turn", async () => {
      const big = await shopper(stack);
      const small = await shopper(stack);
      // The big issuer's twelve requests at once build its backlog; the small one's come after.
      const bigAnswers = await Promise.all(
        Array.from({ length: 12 }, () =>
          big.issuer.call('POST', '/api/v1/incoming-txn', settledEvent(big.card, { merchantId })),
        ),
      );
      assert.deepEqual(new Set(bigAnswers.map((r) => r.status)), new Set([204]));
      for (let i = 0; i < 3; i++) {
        const res = await small.issuer.call('POST', '/api/v1/incoming-txn', settledEvent(small.card, { merchantId }));
        assert.equal(res.status, 204);
      }

      const rows = await waitProcessed(stack, [big.issuer.id, small.issuer.id]);
      const byProcessing = [...rows].sort((x, y) => x.processedAt!.getTime() - y.processedAt!.getTime());
      for (const s of [big, small]) {
        const arrived = rows.filter((r) => r.issuerId === s.issuer.id).map((r) => r.id);
        const processed = byProcessing.filter((r) => r.issuerId === s.issuer.id).map((r) => r.id);
        assert.deepEqual(processed, arrived, 'in order of arrival');
      }
      // The small issuer's purchases did not wait for the big one's backlog to drain.
      const lastOf = (s: Shopper) =>
        Math.max(...rows.filter((r) => r.issuerId === s.issuer.id).map((r) => r.processedAt!.getTime()));
      assert.ok(lastOf(small) < lastOf(big), 'the small issuer was served between the big one’s purchases');
      // One at a time means one run at a time: each starts after the one before it closed.
      await stack.waitUntilReleased(rows.map((r) => r.id));
      assert.equal(maxOverlap(await runningIntervals(stack, rows)), 1);
    });
  });

  it('reports waiting events and the oldest one’s age by issuer, while Temporal refuses them', async () => {
    const stack = await startStack();
    // A watch whose Temporal is unreachable: it admits, its signals fail, the events wait again.
    const deadTemporal = testEngine(
      new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await freePort()}`, connectTimeout: 300 }) }),
      stack.taskQueue,
    );
    try {
      await clearLeftovers(stack);
      await catalogue(stack);
      const s = await shopper(stack);
      // Stored by an API without a hand-over of its own, a minute ago.
      const app = await startTestApp({ db: stack.db });
      try {
        const events = [settledEvent(s.card, { merchantId }), settledEvent(s.card, { merchantId })];
        const res = await app.request('POST', '/api/v1/incoming-txn', { token: s.issuer.token, body: events });
        assert.equal(res.status, 204);
      } finally {
        await app.close();
      }
      await stack.db.handoverPending.updateMany({
        where: { issuerId: s.issuer.id },
        data: { queuedAt: new Date(Date.now() - 60_000) },
      });
      const watch = startHandoverWatch(
        { db: stack.db, clock: { now: () => new Date() }, temporal: deadTemporal, logger: createLogger('silent') },
        { intervalMs: 100, busyIntervalMs: 100, metricsIntervalMs: 0 },
      );
      try {
        const seen = await waitForGauge(s.issuer.id);
        assert.equal(seen.waiting, 2);
        assert.ok(seen.oldestSeconds >= 60 && seen.oldestSeconds < 120, JSON.stringify(seen));
      } finally {
        await watch.stop();
      }
    } finally {
      await stack.stop();
    }
  });
});

async function waitForGauge(issuerId: string): Promise<{ waiting: number; oldestSeconds: number }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const waiting = (await handoverWaitingEvents.get()).values.find((v) => v.labels.issuer === issuerId)?.value;
    const oldest = (await handoverOldestSeconds.get()).values.find((v) => v.labels.issuer === issuerId)?.value;
    if (waiting !== undefined && oldest !== undefined) return { waiting, oldestSeconds: oldest };
    assert.ok(Date.now() < deadline, 'the watch reported the issuer’s queue');
    await new Promise((r) => setTimeout(r, 100));
  }
}
