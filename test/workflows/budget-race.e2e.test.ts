// 2,000 purchases race for an offer budget that covers 1,000 of them (API.md, "Funded offers":
// never overspent by one minor unit under any concurrency), on the real API, hand-over, Temporal
// worker and PostgreSQL: 200 groups, 10 purchases each, all ingested at once and settled by
// concurrent lifecycle workflows. The budget of 10,005 gives 1,000 purchases their 10 and one at
// the edge its last 5; every other purchase is refused with offer_budget_exhausted; the budget's
// row, the reward events and the ledger agree to the minor unit.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';
import { fromDbMinor } from '../../core/ledger';

const GROUPS = 200;
const PURCHASES_PER_GROUP = 10;
const REWARD = 10; // 1 % of 1,000
const BUDGET = 1_000 * REWARD + REWARD / 2;

describe('an offer budget under concurrent settlements', function () {
  this.timeout(600_000);
  let stack: Stack;
  let issuer: TestIssuer;

  before(async () => {
    stack = await startStack();
    issuer = await newIssuer(stack.app, 'sandbox');
  });
  after(() => stack?.stop());

  it('is never overspent when 2,000 purchases race for a budget that covers 1,000', async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, {
      cashbackRateBps: 100,
      startsAt: daysFromNow(-5),
      budgetMinor: BUDGET,
    });
    const bulk = await issuer.call('POST', '/api/v2/chg/bulk-upsert', {
      items: Array.from({ length: GROUPS }, () => groupBody()),
    });
    assert.equal(bulk.status, 200, bulk.text);
    const groups = bulk.body.results.map((r: { id: string }, i: number) => ({ id: r.id, body: null as unknown, i }));
    for (const g of groups) {
      const res = await issuer.call('PUT', `/api/v2/chg/${g.id}/merchant/${merchant.id}/activation`, {});
      assert.equal(res.status, 201, res.text);
      g.body = (await issuer.call('GET', `/api/v2/chg/${g.id}`)).body;
    }
    const events: Array<ReturnType<typeof settledEvent>> = [];
    for (let p = 0; p < PURCHASES_PER_GROUP; p++)
      for (const g of groups) events.push(settledEvent(cardOf(g.body), { amount: 1_000, merchantId: merchant.id }));
    // All at once: four requests of 500, every purchase handed to its own lifecycle workflow.
    await Promise.all(
      [0, 1, 2, 3].map(async (part) => {
        const res = await issuer.call('POST', '/api/v1/incoming-txn', events.slice(part * 500, part * 500 + 500));
        assert.equal(res.status, 204, res.text);
      }),
    );
    const deadline = Date.now() + 480_000;
    for (;;) {
      const pending = await stack.db.ingestedEvent.count({ where: { issuerId: issuer.id, rewardStatus: 'pending' } });
      if (pending === 0) break;
      assert.ok(Date.now() < deadline, `${pending} purchases still pending`);
      await new Promise((r) => setTimeout(r, 500));
    }

    const outcomes = await stack.db.ingestedEvent.groupBy({
      by: ['rewardStatus'],
      where: { issuerId: issuer.id, kind: 'settled' },
      _count: true,
    });
    assert.deepEqual(Object.fromEntries(outcomes.map((o) => [o.rewardStatus, o._count])), {
      matched: 1_001,
      not_matched: 999,
    });
    const earned = await stack.db.rewardEvent.groupBy({
      by: ['amountMinor'],
      where: { issuerId: issuer.id, type: 'cashback_earned', offerId: offer.id },
      _count: true,
    });
    assert.deepEqual(
      earned.map((e) => [fromDbMinor(e.amountMinor), e._count]).sort((a, b) => a[0] - b[0]),
      [
        [REWARD / 2, 1],
        [REWARD, 1_000],
      ],
      'a thousand full rewards and one partial at the edge',
    );
    const row = await stack.db.offerBudget.findUniqueOrThrow({
      where: { offerId_period: { offerId: offer.id, period: '' } },
    });
    assert.equal(fromDbMinor(row.usedMinor), BUDGET, 'overspent by 0, and nothing left unspent');
    const refused = await stack.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id, kind: 'settled', rewardStatus: 'not_matched' },
      select: { matchTrace: true },
    });
    for (const r of refused)
      assert.deepEqual((r.matchTrace as { earn: { reasons: string[] } }).earn.reasons, ['offer_budget_exhausted']);
    const read = await stack.app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`);
    assert.deepEqual(read.body.budget, {
      limitMinor: BUDGET,
      usedMinor: BUDGET,
      remainingMinor: 0,
      period: 'lifetime',
    });
    await assertLedgerHealthy(stack.db, issuer.id);
    const receivable = await stack.db.ledgerAccount.findUniqueOrThrow({
      where: { id: `${issuer.id}:merchant_receivable:${merchant.id}` },
    });
    assert.equal(fromDbMinor(receivable.balanceMinor), BUDGET);
  });
});
