// Clawback after spend (docs/decisions/0012-clawback-after-spend.md): a refund of a purchase whose grant
// was already spent takes the shortfall from the group's cashback balance as far as it
// reaches, never below zero; the rest is owed by the group (docs/decisions/0038-cashback-paid-out.md).
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../../helpers/app';
import { settledEvent, storedEvent } from '../../helpers/events';
import { activatedMerchant, groupWithCard } from '../../helpers/scenario';
import { assertLedgerHealthy } from '../../helpers/ledger';
import { createLogger } from '../../../core/logger';
import { settleTransaction } from '../../../activities/lifecycle/settle';
import { clawBackRefund } from '../../../activities/lifecycle/refund';
import { rewardsSummary } from '../../../api/balances/summary';

describe('clawBackRefund of spent branded balance', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  it('takes the shortfall from cashback up to its balance, and the group owes the rest', async () => {
    const deps = { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } };
    const { group, card } = await groupWithCard(issuer);
    const { merchant } = await activatedMerchant(app, issuer, group.id, {
      brandedBalance: true,
      offer: { cashbackRateBps: 500, brandedRateBps: 1000 },
    });
    const ingest = async (event: any) => {
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
      return (await storedEvent(app.db, issuer.id, 'settled', event.id)).id;
    };
    const t = Date.now();
    // Purchase 1 earns 500 cashback and a grant of 1,000; purchase 2 spends that grant and
    // earns 200 cashback and a grant of 400 on its remaining 4,000.
    const first = settledEvent(card, { amount: 10_000, merchantId: merchant.id });
    await settleTransaction(deps, { eventId: await ingest(first), atMs: t });
    await settleTransaction(deps, {
      eventId: await ingest(settledEvent(card, { amount: 5_000, merchantId: merchant.id })),
      atMs: t + 1000,
    });

    const refundId = await ingest(
      settledEvent(card, {
        state: 'refunded',
        amount: 10_000,
        relatedTransactionId: first.id,
        merchantId: merchant.id,
      }),
    );
    await clawBackRefund(deps, { eventId: refundId, atMs: t + 2000 });
    await clawBackRefund(deps, { eventId: refundId, atMs: t + 3000 }); // a retry changes nothing

    const trace = (await app.db.ingestedEvent.findUniqueOrThrow({ where: { id: refundId } })).matchTrace as any;
    assert.deepEqual(
      [
        trace.cashback.clawedNowMinor,
        trace.branded.dueMinor,
        trace.branded.clawedNowMinor,
        trace.branded.shortfallFromCashbackMinor,
        trace.branded.shortfallOwedMinor,
      ],
      [500, 1000, 0, 1000, 800],
    );
    // The shortfall's clawback says what it covers; the purchase's history reads that, not its key.
    const clawbacks = await app.db.rewardEvent.findMany({
      where: { sourceEventId: refundId },
      orderBy: { amountMinor: 'asc' },
    });
    assert.deepEqual(
      clawbacks.map((e) => [e.type, Number(e.amountMinor), e.coversBrandedShortfall]),
      [
        ['cashback_clawed_back', 200, true],
        ['cashback_clawed_back', 500, false],
        ['cashback_clawed_back', 800, true],
      ],
    );
    const summary = (await rewardsSummary(app.db, issuer.id, group.id, new Date(t + 3000)))!;
    assert.deepEqual(summary.cashback, {
      earnedMinor: 700,
      clawedBackMinor: 1500,
      adjustedMinor: 0,
      paidOutMinor: 0,
      pendingMinor: 0,
      onHoldMinor: 0,
      payableMinor: 0,
      balanceMinor: 0,
      owedMinor: 800,
    });
    // The other purchase's grant is not touched: a clawback only draws on the refunded purchase's grants.
    assert.deepEqual([summary.brandedBalance.availableMinor, summary.brandedBalance.spentMinor], [400, 1000]);
    await assertLedgerHealthy(app.db, issuer.id);
  });
});
