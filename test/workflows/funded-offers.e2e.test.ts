// Funded offers (API.md, "Funded offers") on the real API, worker, PostgreSQL and Temporal: a
// budget that caps the purchase at its edge and then refuses with offer_budget_exhausted, a refund
// that gives its clawback back to the budget, a monthly budget that resets on the sandbox clock,
// and the issuer's share and the merchant's commission posted with each purchase and returned with
// each refund, in the transaction's ledger entries and the export.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { buyAt, shopperAt as shopperOf, type Shopper } from '../helpers/shoppers';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';

describe('funded offers', function () {
  this.timeout(180_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.stop());

  const shopperAt = (merchantId: string, issuer?: TestIssuer) => shopperOf(stack, merchantId, issuer);
  const buy = (s: Shopper, merchantId: string, amount: number, extra: Record<string, unknown> = {}) =>
    buyAt(stack, s, merchantId, amount, extra);

  async function refund(s: Shopper, merchantId: string, purchaseExternalId: string, amount: number) {
    return buy(s, merchantId, amount, { state: 'refunded', relatedTransactionId: purchaseExternalId });
  }

  const detail = async (s: Shopper, txnId: string) =>
    (await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/transaction/${txnId}/reward-detail`)).body;
  const trace = async (s: Shopper, txnId: string) =>
    (await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/transaction/${txnId}/match-trace`)).body.trace;
  const budgetOf = async (merchantId: string, offerId: string) =>
    (await stack.app.operator('GET', `/admin/v1/merchants/${merchantId}/offers/${offerId}`)).body.budget;

  describe('budgets', () => {
    it('caps the purchase at the edge to what is left, then refuses with offer_budget_exhausted', async () => {
      const merchant = await createMerchant(stack.app);
      const offer = await createOffer(stack.app, merchant.id, {
        cashbackRateBps: 1000,
        startsAt: daysFromNow(-5),
        budgetMinor: 2_500,
      });
      // Two issuers share one budget: it is the offer's, across every group of every issuer.
      const a = await shopperAt(merchant.id);
      const b = await shopperAt(merchant.id);
      const first = await buy(a, merchant.id, 10_000);
      const second = await buy(b, merchant.id, 10_000);
      assert.deepEqual(
        [(await detail(a, first.id)).earnedAmountMinor, (await detail(b, second.id)).earnedAmountMinor],
        [1000, 1000],
      );
      const edge = await buy(a, merchant.id, 10_000);
      assert.equal(edge.status, 'matched');
      assert.equal((await detail(a, edge.id)).earnedAmountMinor, 500, 'the purchase at the edge gets what is left');
      const edgeTrace = await trace(a, edge.id);
      assert.equal(edgeTrace.arithmetic.cappedBy, 'budget');
      assert.deepEqual(edgeTrace.budgetUse, {
        offerId: offer.id,
        periodKey: '',
        amountMinor: 500,
        usedMinor: 2000,
        cappedByBudget: true,
      });
      assert.deepEqual(await budgetOf(merchant.id, offer.id), {
        limitMinor: 2500,
        usedMinor: 2500,
        remainingMinor: 0,
        period: 'lifetime',
      });

      const refused = await buy(b, merchant.id, 10_000);
      assert.equal(refused.status, 'not_matched');
      const refusedTrace = await trace(b, refused.id);
      assert.deepEqual(refusedTrace.earn.reasons, ['offer_budget_exhausted']);
      const condition = refusedTrace.earn.offers[0].conditions.find((c: any) => c.name === 'budget_not_exhausted');
      assert.deepEqual(
        [condition.passed, condition.detail],
        [false, '2500 of the lifetime budget of 2500 used, 0 left'],
      );
      const eligibility = await b.issuer.call(
        'GET',
        `/api/v2/chg/${b.chgId}/merchant/${merchant.id}/eligibility?amountMinor=10000`,
      );
      assert.equal(eligibility.status, 200, eligibility.text);
      assert.deepEqual([eligibility.body.eligible, eligibility.body.reasons], [false, ['offer_budget_exhausted']]);
      for (const s of [a, b]) await assertLedgerHealthy(stack.db, s.issuer.id);
    });

    it("gives a refund's clawback back to the budget, which the next purchase can then earn", async () => {
      const merchant = await createMerchant(stack.app);
      const offer = await createOffer(stack.app, merchant.id, {
        cashbackRateBps: 1000,
        startsAt: daysFromNow(-5),
        budgetMinor: 1_000,
      });
      const s = await shopperAt(merchant.id);
      const purchase = await buy(s, merchant.id, 10_000);
      assert.equal((await budgetOf(merchant.id, offer.id)).remainingMinor, 0);
      const back = await refund(s, merchant.id, purchase.externalId, 4_000);
      assert.equal(back.status, 'matched');
      assert.equal((await trace(s, back.id)).budgetReturnedMinor, 400);
      assert.deepEqual(await budgetOf(merchant.id, offer.id), {
        limitMinor: 1000,
        usedMinor: 600,
        remainingMinor: 400,
        period: 'lifetime',
      });
      const estimate = await s.issuer.call(
        'GET',
        `/api/v2/chg/${s.chgId}/merchant/${merchant.id}/eligibility?amountMinor=10000`,
      );
      assert.deepEqual([estimate.body.eligible, estimate.body.estimatedRewardMinor], [true, 400]);
      const next = await buy(s, merchant.id, 10_000);
      assert.equal((await detail(s, next.id)).earnedAmountMinor, 400);
      // A full refund gives back all the purchase took, however it was refunded.
      await refund(s, merchant.id, purchase.externalId, 6_000);
      await refund(s, merchant.id, next.externalId, 10_000);
      assert.deepEqual((await budgetOf(merchant.id, offer.id)).usedMinor, 0);
      await assertLedgerHealthy(stack.db, s.issuer.id);
    });

    it("resets a monthly budget each calendar month of the purchase's date, on the sandbox clock", async () => {
      const merchant = await createMerchant(stack.app);
      await createOffer(stack.app, merchant.id, {
        cashbackRateBps: 1000,
        startsAt: daysFromNow(-5),
        budgetMinor: 1_500,
        budgetPeriod: 'month',
      });
      const s = await shopperAt(merchant.id);
      // Start on the 2nd of a month (UTC) on the issuer's clock, so that two purchases a day apart
      // share it and the next month is a known number of days away.
      const clock = async () => new Date((await s.issuer.call('GET', '/api/v2/sandbox/clock')).body.now);
      const advanceTo = async (target: Date) => {
        const hours = Math.ceil((target.getTime() - (await clock()).getTime()) / 3_600_000);
        const res = await s.issuer.call('POST', '/api/v2/sandbox/clock/advance', { hours });
        assert.equal(res.status, 200, res.text);
      };
      const now = await clock();
      await advanceTo(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2, 12)));
      const earned = async (amount: number) =>
        (await detail(s, (await buy(s, merchant.id, amount)).id)).earnedAmountMinor;
      assert.deepEqual([await earned(10_000), await earned(10_000), await earned(10_000)], [1000, 500, 0]);
      const start = await clock();
      await advanceTo(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1, 1)));
      assert.equal(await earned(10_000), 1000, 'a new month, a new budget');
      await assertLedgerHealthy(stack.db, s.issuer.id);
    });
  });

  describe('funding and commission', () => {
    /** The transaction's transfers as [kind, amount, reward event type, debit account kind, credit account kind]. */
    const ledger = async (s: Shopper, txnId: string) => {
      const res = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/transaction/${txnId}/ledger-entries`);
      assert.equal(res.status, 200, res.text);
      return res.body.data.map((t: any) => [
        t.kind,
        t.amountMinor,
        t.rewardEventType,
        t.entries.find((e: any) => e.direction === 'debit').accountKind,
        t.entries.find((e: any) => e.direction === 'credit').accountKind,
      ]);
    };
    const balanceOf = async (accountId: string) =>
      Number((await stack.db.ledgerAccount.findUnique({ where: { id: accountId } }))?.balanceMinor ?? 0n);

    it("posts the issuer's share and the commission with each purchase, and returns them pro rata with each refund", async () => {
      const merchant = await createMerchant(stack.app, {
        brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 30, expiryDays: 365 },
      });
      await createOffer(stack.app, merchant.id, {
        cashbackRateBps: 500,
        brandedRateBps: 300,
        startsAt: daysFromNow(-5),
        funding: { issuerShareBps: 2500 },
        commission: { rateBps: 150, flatMinor: 25 },
      });
      const s = await shopperAt(merchant.id);
      const purchase = await buy(s, merchant.id, 10_000);
      // 500 cashback and 300 branded; the issuer funds a quarter of each; commission 1.5 % of 10,000 + 25.
      const sorted = (rows: unknown[][]) => [...rows].sort((a, b) => String(a[0]).localeCompare(String(b[0])));
      assert.deepEqual(sorted(await ledger(s, purchase.id)), [
        ['commission_charged', 175, 'cashback_earned', 'merchant_receivable', 'commission'],
        ['earn_branded', 300, 'branded_earned', 'merchant_receivable', 'chg_branded'],
        ['earn_cashback', 500, 'cashback_earned', 'merchant_receivable', 'chg_cashback'],
        ['issuer_share_branded', 75, 'branded_earned', 'issuer_funding', 'merchant_receivable'],
        ['issuer_share_cashback', 125, 'cashback_earned', 'issuer_funding', 'merchant_receivable'],
      ]);
      const issuerId = s.issuer.id;
      const receivable = `${issuerId}:merchant_receivable:${merchant.id}`;
      const funding = `${issuerId}:issuer_funding`;
      const commission = `${issuerId}:commission:${merchant.id}`;
      assert.deepEqual(
        [await balanceOf(receivable), await balanceOf(funding), await balanceOf(commission)],
        [800 - 200 + 175, 200, 175],
        'the merchant owes its share and the commission, the issuer its share',
      );

      const partial = await refund(s, merchant.id, purchase.externalId, 4_000);
      assert.deepEqual(sorted(await ledger(s, partial.id)), [
        ['clawback_branded', 120, 'branded_clawed_back', 'chg_branded', 'merchant_receivable'],
        ['clawback_cashback', 200, 'cashback_clawed_back', 'chg_cashback', 'merchant_receivable'],
        ['commission_returned', 70, 'cashback_clawed_back', 'commission', 'merchant_receivable'],
        ['issuer_share_returned', 80, 'cashback_clawed_back', 'merchant_receivable', 'issuer_funding'],
      ]);
      const rest = await refund(s, merchant.id, purchase.externalId, 6_000);
      assert.deepEqual(sorted(await ledger(s, rest.id)), [
        ['clawback_branded', 180, 'branded_clawed_back', 'chg_branded', 'merchant_receivable'],
        ['clawback_cashback', 300, 'cashback_clawed_back', 'chg_cashback', 'merchant_receivable'],
        ['commission_returned', 105, 'cashback_clawed_back', 'commission', 'merchant_receivable'],
        ['issuer_share_returned', 120, 'cashback_clawed_back', 'merchant_receivable', 'issuer_funding'],
      ]);
      assert.deepEqual(
        [await balanceOf(receivable), await balanceOf(funding), await balanceOf(commission)],
        [0, 0, 0],
        'a full refund returns exactly everything',
      );

      // The export shows each event's own transfer, then its accompanying ones, and the issuer's share.
      const from = new Date(Date.now() - 86_400_000).toISOString();
      const to = new Date(Date.now() + 86_400_000).toISOString();
      const exported = await s.issuer.call('GET', `/api/v2/reward-events/export?from=${from}&to=${to}`);
      assert.equal(exported.status, 200, exported.text);
      const rows = exported.text
        .trim()
        .split('\n')
        .map((line: string) => JSON.parse(line))
        .filter((r: any) => r.record === 'reward_event');
      const earned = rows.find((r: any) => r.type === 'cashback_earned');
      const transfers = await stack.db.ledgerTransfer.findMany({ where: { rewardEventId: earned.id } });
      const idOf = (kind: string) => transfers.find((t) => t.kind === kind)!.id;
      assert.equal(earned.transferId, idOf('earn_cashback'));
      assert.deepEqual(
        [earned.transferIds[0], [...earned.transferIds].sort(), earned.issuerShareMinor],
        [
          idOf('earn_cashback'),
          [idOf('earn_cashback'), idOf('issuer_share_cashback'), idOf('commission_charged')].sort(),
          125,
        ],
      );
      const shares = rows.map((r: any) => [r.type, r.issuerShareMinor]).sort();
      assert.deepEqual(shares, [
        ['branded_clawed_back', 0],
        ['branded_clawed_back', 0],
        ['branded_earned', 75],
        ['cashback_clawed_back', 120],
        ['cashback_clawed_back', 80],
        ['cashback_earned', 125],
      ]);
      await assertLedgerHealthy(stack.db, issuerId);
    });
  });
});
