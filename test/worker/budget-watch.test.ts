// The budget watch (worker/budget-watch.ts): its reading of every live budgeted offer's use of
// its current period's budget, and the gauge the RewardsOfferBudgetNearlySpent alert watches: one
// series per offer and period, dropped when the offer ends or its period changes.
import assert from 'node:assert/strict';
import { createDb, type Db } from '../../prisma/client';
import { testDatabaseUrl } from '../helpers/env';
import { merchantId as newMerchantId } from '../helpers/ledger';
import { newId } from '../../core/ids';
import { registry } from '../../core/metrics';
import { createLogger } from '../../core/logger';
import { readBudgets, startBudgetWatch } from '../../worker/budget-watch';

async function series(offerIds: string[]) {
  const metric = await registry.getSingleMetric('rewards_offer_budget_used_ratio')!.get();
  return metric.values
    .filter((v) => offerIds.includes(String(v.labels.offer_id)))
    .map((v) => [v.labels.offer_id, v.labels.period, v.value])
    .sort();
}

describe('budget watch', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 2)));
  after(() => db.$disconnect());

  it("reads each live budgeted offer's share used in its current period, and drops the series of ended ones", async () => {
    const now = new Date('2026-11-20T12:00:00Z');
    const merchant = await db.merchant.create({
      data: { id: newMerchantId(), name: 'budget watch', category: 'dining' },
    });
    const offer = (over: object) =>
      db.offer.create({
        data: {
          id: newId('ofr'),
          merchantId: merchant.id,
          title: 'budgeted',
          cashbackRateBps: 100,
          brandedRateBps: 0,
          startsAt: new Date('2026-01-01T00:00:00Z'),
          ...over,
        },
      });
    const monthly = await offer({ budgetMinor: 1000n, budgetPeriod: 'month' });
    const lifetime = await offer({ budgetMinor: 400n });
    const unlimited = await offer({});
    const ended = await offer({ budgetMinor: 100n, endsAt: new Date('2026-11-01T00:00:00Z') });
    await db.offerBudget.createMany({
      data: [
        { offerId: monthly.id, period: '2026-10', usedMinor: 1000n },
        { offerId: monthly.id, period: '2026-11', usedMinor: 950n },
        { offerId: lifetime.id, period: '', usedMinor: 100n },
        { offerId: ended.id, period: '', usedMinor: 100n },
      ],
    });
    const ids = [monthly.id, lifetime.id, unlimited.id, ended.id];
    try {
      await readAndWatch(ids);
    } finally {
      // Used without purchases: gone again, so the ledger invariants of the tests after this one hold.
      await db.offerBudget.deleteMany({ where: { offerId: { in: ids } } });
    }

    async function readAndWatch(offerIds: string[]) {
      const readings = (await readBudgets(db, now)).filter((r) => offerIds.includes(r.offerId));
      assert.deepEqual(
        readings.map((r) => [r.offerId, r.merchantId, r.period, r.ratio]).sort(),
        [
          [monthly.id, merchant.id, '2026-11', 0.95],
          [lifetime.id, merchant.id, 'lifetime', 0.25],
        ].sort(),
      );
      let clock = now;
      const watch = startBudgetWatch({ db, logger: createLogger('silent'), clock: { now: () => clock } }, 20);
      try {
        await waitUntil(async () => (await series(offerIds)).length === 2);
        assert.deepEqual(
          await series(offerIds),
          [
            [monthly.id, '2026-11', 0.95],
            [lifetime.id, 'lifetime', 0.25],
          ].sort(),
        );
        // December: the monthly offer's November series goes, its December one (nothing used) comes.
        clock = new Date('2026-12-02T00:00:00Z');
        await waitUntil(async () => (await series(offerIds)).some((s) => s[1] === '2026-12'));
        assert.deepEqual(
          await series(offerIds),
          [
            [monthly.id, '2026-12', 0],
            [lifetime.id, 'lifetime', 0.25],
          ].sort(),
        );
      } finally {
        await watch.stop();
      }
    }
  });
});

async function waitUntil(probe: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    assert.ok(Date.now() < deadline, 'the watch did not read in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
