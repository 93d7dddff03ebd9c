// Cumulative offers (API.md, Offer mechanics: spend X get Y, the Nth purchase, progress, refunds
// undo progress) on the real API, worker, PostgreSQL and Temporal. A group's qualifying purchases
// move its progress; the purchase that reaches a completion earns it (cashback on hold with the
// purchase, or a grant of branded balance); refunds lower the measure by what the purchase no
// longer adds and claw back the completions it no longer reaches, the latest first, whichever
// purchase earned them; progress is shown on the group's offers and always equals the ledger; a
// purchase processed late decides as of its own date. The books balance throughout.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { buyAt, shopperAt as shopperOf, type Shopper } from '../helpers/shoppers';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';
import { assertError } from '../helpers/app';
import { waitFor } from '../helpers/webhooks';
import { nameOperator } from '../helpers/operators';

describe('cumulative offers', function () {
  this.timeout(180_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.stop());

  const buy = (s: Shopper, merchantId: string, amount: number, extra: Record<string, unknown> = {}) =>
    buyAt(stack, s, merchantId, amount, extra);
  const refund = (s: Shopper, merchantId: string, amount: number, purchase: { externalId: string }) =>
    buy(s, merchantId, amount, { state: 'refunded', relatedTransactionId: purchase.externalId });
  const trace = async (s: Shopper, txnId: string) =>
    (await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/transaction/${txnId}/match-trace`)).body.trace;
  const progress = async (s: Shopper, offerId: string) => {
    const res = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/offer/${offerId}`);
    assert.equal(res.status, 200, res.text);
    return res.body.progress;
  };
  const listedProgress = async (s: Shopper, merchantId: string, offerId: string) => {
    const res = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/offers?merchantId=${merchantId}`);
    assert.equal(res.status, 200, res.text);
    return res.body.data.find((o: any) => o.id === offerId).progress;
  };
  /** What the group keeps of the offer's completions, per completion, from the ledger's events. */
  const kept = async (s: Shopper, offerId: string) => {
    const events = await stack.db.rewardEvent.findMany({
      where: { chgId: s.chgId, offerId, completion: { not: null } },
      orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }],
    });
    const byCompletion = new Map<number, number>();
    for (const e of events) {
      const sign = e.type.endsWith('_earned') ? 1 : -1;
      byCompletion.set(e.completion!, (byCompletion.get(e.completion!) ?? 0) + sign * Number(e.amountMinor));
    }
    return [...byCompletion.entries()].filter(([, v]) => v !== 0).sort(([a], [b]) => a - b);
  };
  const stored = (s: Shopper, offerId: string) =>
    stack.db.offerProgress.findUnique({ where: { offerId_chgId: { offerId, chgId: s.chgId } } });
  /** A missing_reward claim for the purchase at the merchant, once it reaches one of `statuses`. */
  const claimAt = async (s: Shopper, merchantId: string, transactionId: string, statuses: string[]) => {
    const filed = await s.issuer.call('POST', `/api/v2/chg/${s.chgId}/claims`, {
      transactionId,
      reason: 'missing_reward',
      merchantId,
    });
    assert.equal(filed.status, 202, filed.text);
    return waitFor(`claim ${filed.body.id} decided`, async () => {
      const res = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/claims/${filed.body.id}`);
      return statuses.includes(res.body.status) ? res.body : undefined;
    });
  };

  it('spend X get Y: earns each completion on the purchase reaching it, up to the limit, and refunds take back the latest', async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, {
      reward: {
        kind: 'spend_x_get_y',
        spendMinor: 10_000,
        rewardMinor: 1_000,
        balanceType: 'cashback',
        repeatable: true,
      },
      maxRedemptionsPerChg: 2,
      startsAt: daysFromNow(-5),
    });
    assert.deepEqual([offer.cashbackRateBps, offer.brandedRateBps], [0, 0], 'a cumulative offer pays no rate');
    const s = await shopperOf(stack, merchant.id);
    assert.deepEqual(await progress(s, offer.id), { current: 0, target: 10_000, completions: 0 });

    const first = await buy(s, merchant.id, 6_000);
    assert.equal(first.status, 'not_matched', 'progress alone earns nothing yet');
    assert.deepEqual((await trace(s, first.id)).progress[0], {
      offerId: offer.id,
      contribution: 6_000,
      measureBefore: 0,
      measureAfter: 6_000,
      completionsBefore: 0,
      completionsAfter: 0,
      completions: [],
    });
    const second = await buy(s, merchant.id, 5_000);
    assert.equal(second.status, 'matched');
    assert.deepEqual(await listedProgress(s, merchant.id, offer.id), {
      current: 1_000,
      target: 10_000,
      completions: 1,
    });
    const hold = await stack.db.cashbackHold.findUniqueOrThrow({ where: { transactionId: second.id } });
    assert.equal(hold.amountMinor, 1_000n, "the completion's cashback is held with the purchase that reached it");

    const third = await buy(s, merchant.id, 15_000);
    assert.equal(third.status, 'matched');
    assert.deepEqual(
      await progress(s, offer.id),
      { current: 10_000, target: 10_000, completions: 2 },
      'the limit reached',
    );
    const fourth = await buy(s, merchant.id, 20_000);
    assert.equal(fourth.status, 'not_matched', 'past the limit: nothing more');
    assert.deepEqual(await kept(s, offer.id), [
      [1, 1_000],
      [2, 1_000],
    ]);

    // 46,000 spent. Refunds of the last purchase (20,000) leave 26,000: still two completions.
    await refund(s, merchant.id, 20_000, fourth);
    assert.deepEqual(await kept(s, offer.id), [
      [1, 1_000],
      [2, 1_000],
    ]);
    // The third purchase half returned: 18,500, one completion left; the second's reward stands,
    // the third's own (the second completion) comes back.
    const partial = await refund(s, merchant.id, 7_500, third);
    assert.equal(partial.status, 'matched');
    assert.deepEqual(await kept(s, offer.id), [[1, 1_000]]);
    const refundTrace = await trace(s, partial.id);
    assert.deepEqual(
      [
        refundTrace.progress[0].before,
        refundTrace.progress[0].after,
        refundTrace.progress[0].clawed.map((c: any) => c.completion),
      ],
      [{ measure: 26_000, rewarded: 2 }, { measure: 18_500, rewarded: 1 }, [2]],
    );
    const thirdHold = await stack.db.cashbackHold.findUniqueOrThrow({ where: { transactionId: third.id } });
    assert.equal(thirdHold.remainingMinor, 0n, "the third purchase's hold gives back what its completion took");

    // The first purchase returned in full (out of order): 12,500, the first completion stays.
    await refund(s, merchant.id, 6_000, first);
    assert.deepEqual(await kept(s, offer.id), [[1, 1_000]]);
    // The second returned in full: 7,500, below X: the first completion comes back too.
    await refund(s, merchant.id, 5_000, second);
    assert.deepEqual(await kept(s, offer.id), []);
    assert.deepEqual(await progress(s, offer.id), { current: 7_500, target: 10_000, completions: 0 });
    const row = await stored(s, offer.id);
    assert.deepEqual([row?.measure, row?.rewarded], [7_500n, 0]);

    // Spend again: the completion is earned again, by the purchase that reaches it now.
    const again = await buy(s, merchant.id, 3_000);
    assert.equal(again.status, 'matched');
    assert.deepEqual(await kept(s, offer.id), [[1, 1_000]]);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it("the Nth purchase: counts purchases at the minimum, pays a rate of the Nth's amount as branded balance, and gives it back when one drops out", async () => {
    const merchant = await createMerchant(stack.app, {
      brandedBalance: { enabled: true, availabilityDelayDays: 30, expiryDays: 365 },
    });
    const offer = await createOffer(stack.app, merchant.id, {
      reward: { kind: 'nth_purchase', purchases: 3, rateBps: 1_000, balanceType: 'branded', repeatable: false },
      minSpendMinor: 2_000,
      startsAt: daysFromNow(-5),
    });
    const s = await shopperOf(stack, merchant.id);
    const a = await buy(s, merchant.id, 2_500);
    assert.equal((await buy(s, merchant.id, 1_999)).status, 'not_matched');
    assert.deepEqual(
      await progress(s, offer.id),
      { current: 1, target: 3, completions: 0 },
      'below the minimum: not counted',
    );
    await buy(s, merchant.id, 2_000);
    const third = await buy(s, merchant.id, 7_000);
    assert.equal(third.status, 'matched');
    assert.deepEqual(await kept(s, offer.id), [[1, 700]], '10 % of the third qualifying purchase');
    const grant = await stack.db.rewardGrant.findFirstOrThrow({ where: { sourceTransactionId: third.id } });
    assert.equal(grant.amountMinor, 700n);
    assert.deepEqual(await progress(s, offer.id), { current: 3, target: 3, completions: 1 });
    assert.equal(
      (await buy(s, merchant.id, 9_000)).status,
      'not_matched',
      'a fourth counts, and earns nothing: not repeatable',
    );
    assert.deepEqual(await kept(s, offer.id), [[1, 700]]);

    // The first drops below the minimum (2,500 - 1,000): four counted become three, the completion stands.
    await refund(s, merchant.id, 1_000, a);
    assert.deepEqual(await kept(s, offer.id), [[1, 700]]);
    // The third returned in full: two left, the completion's grant drawn back.
    await refund(s, merchant.id, 7_000, third);
    assert.deepEqual(await kept(s, offer.id), []);
    const drawn = await stack.db.rewardGrant.findUniqueOrThrow({ where: { id: grant.id } });
    assert.equal(drawn.remainingMinor, 0n);
    assert.deepEqual(await progress(s, offer.id), { current: 2, target: 3, completions: 0 });
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it('decides a purchase processed late as of its own date: inside the window it counts, after the end it does not', async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, {
      reward: {
        kind: 'spend_x_get_y',
        spendMinor: 5_000,
        rewardMinor: 400,
        balanceType: 'cashback',
        repeatable: false,
      },
      startsAt: daysFromNow(-1),
      endsAt: daysFromNow(1),
    });
    const s = await shopperOf(stack, merchant.id);
    const inWindow = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    // The issuer's clock moves past the offer's end; a purchase dated inside the window arrives now.
    const advanced = await s.issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 2 });
    assert.equal(advanced.status, 200, advanced.text);
    const late = await buy(s, merchant.id, 6_000, { createdAt: inWindow, settledAt: inWindow });
    assert.equal(late.status, 'matched', 'dated inside the window: it completes, though processed after the end');
    const now = await buy(s, merchant.id, 6_000);
    assert.equal(now.status, 'not_matched');
    assert.deepEqual((await trace(s, now.id)).progress, []);
    assert.deepEqual(await kept(s, offer.id), [[1, 400]]);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it("takes each completion from the offer's budget with the issuer's share, and a clawback returns both", async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, {
      reward: { kind: 'spend_x_get_y', spendMinor: 5_000, rewardMinor: 400, balanceType: 'cashback', repeatable: true },
      budgetMinor: 1_000,
      funding: { issuerShareBps: 5_000 },
      startsAt: daysFromNow(-5),
    });
    const s = await shopperOf(stack, merchant.id);
    const funding = async () =>
      Number(
        (await stack.db.ledgerAccount.findUnique({ where: { id: `${s.issuer.id}:issuer_funding` } }))?.balanceMinor ??
          0n,
      );
    const used = async () =>
      (await stack.app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`)).body.budget.usedMinor;

    const big = await buy(s, merchant.id, 12_000);
    assert.deepEqual(await kept(s, offer.id), [
      [1, 400],
      [2, 400],
    ]);
    assert.deepEqual([await used(), await funding()], [800, 400]);
    // The budget has 200 left: the third completion gets it; the fourth gets nothing and counts.
    const edge = await buy(s, merchant.id, 6_000);
    assert.deepEqual((await trace(s, edge.id)).budgetUses, [
      { offerId: offer.id, periodKey: '', amountMinor: 200, usedMinor: 800, cappedByBudget: true },
    ]);
    const past = await buy(s, merchant.id, 5_000);
    assert.equal(past.status, 'not_matched', 'a completion the budget cannot pay rewards nothing');
    assert.deepEqual(await progress(s, offer.id), { current: 3_000, target: 5_000, completions: 4 });
    assert.deepEqual([await used(), await funding()], [1_000, 500]);

    // The big purchase refunded in full: the measure (11,000) reaches 2, so the fourth and third
    // completions come back, the third to the budget of the purchase that earned it, with its share.
    const back = await refund(s, merchant.id, 12_000, big);
    const refundTrace = await trace(s, back.id);
    assert.deepEqual(
      refundTrace.progress[0].clawed.map((c: any) => [
        c.completion,
        c.cashbackMinor,
        c.transactionId,
        c.issuerShareReturnedMinor,
      ]),
      [
        [4, 0, null, 0],
        [3, 200, edge.id, 100],
      ],
    );
    assert.equal(refundTrace.budgetReturnedMinor, 200);
    assert.deepEqual(await kept(s, offer.id), [
      [1, 400],
      [2, 400],
    ]);
    assert.deepEqual([await used(), await funding()], [800, 400]);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it('counts a purchase the matcher missed once its claim is approved: the completion it reaches, taken back by its refund', async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, {
      reward: { kind: 'nth_purchase', purchases: 2, rewardMinor: 400, balanceType: 'cashback', repeatable: true },
      budgetMinor: 10_000,
      funding: { issuerShareBps: 5_000 },
      startsAt: daysFromNow(-5),
    });
    const s = await shopperOf(stack, merchant.id);
    const claimOf = (transactionId: string, statuses: string[]) => claimAt(s, merchant.id, transactionId, statuses);
    const first = await buy(s, merchant.id, 2_000);
    // The second purchase's descriptor names no merchant the rules know: nothing matched it.
    const missed = await buy(s, merchant.id, 3_000, {
      merchantId: undefined,
      merchantDescriptor: `NOWHERE ${s.chgId}`,
    });
    assert.deepEqual([first.status, missed.status], ['not_matched', 'not_matched']);
    assert.deepEqual(await progress(s, offer.id), { current: 1, target: 2, completions: 0 });

    const review = await claimOf(missed.id, ['needs_review', 'rejected']);
    assert.deepEqual(
      [review.status, review.reasonCode],
      ['needs_review', 'merchant_not_recognised'],
      JSON.stringify(review),
    );
    assert.deepEqual(review.computedReward, { cashbackMinor: 400, brandedMinor: 0 });
    assert.deepEqual(
      review.evidence.progress.map((p: any) => [p.offerId, p.contribution, p.after, p.completions]),
      [[offer.id, 1, { measure: 2, rewarded: 1 }, [{ completion: 1, amountMinor: 400, balanceType: 'cashback' }]]],
    );
    const approved = await stack.app.operator('POST', `/admin/v1/claims/${review.id}/approve`, {});
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual(approved.body.adjustmentIds, [], "the completion is the merchant offer's reward, not a credit");
    assert.deepEqual(await kept(s, offer.id), [[1, 400]]);
    assert.deepEqual(await progress(s, offer.id), { current: 0, target: 2, completions: 1 });
    const completion = await stack.db.rewardEvent.findFirstOrThrow({ where: { chgId: s.chgId, offerId: offer.id } });
    assert.deepEqual(
      [completion.transactionId, completion.merchantId, completion.completion],
      [missed.id, merchant.id, 1],
    );
    const hold = await stack.db.cashbackHold.findUniqueOrThrow({ where: { transactionId: missed.id } });
    assert.equal(Number(hold.amountMinor), 400, 'on hold with the purchase, for its return window');
    assert.deepEqual(
      (await trace(s, missed.id)).claims.map((c: any) => [c.claimId, c.budgetUses.length, c.rewardEventIds.length]),
      [[review.id, 1, 1]],
      "the purchase's trace names what the claim counted",
    );
    const offerNow = (await stack.app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`)).body;
    assert.equal(offerNow.budget.usedMinor, 400);
    // A second claim for the purchase finds it counted.
    const again = await claimOf(missed.id, ['rejected', 'needs_review']);
    assert.deepEqual([again.status, again.reasonCode], ['rejected', 'already_rewarded']);

    // Refunded in full: the purchase no longer counts, and the completion it earned comes back,
    // to the budget and with the issuer's share, as a settled purchase's would.
    const back = await refund(s, merchant.id, 3_000, missed);
    assert.equal(back.status, 'matched');
    assert.deepEqual(await kept(s, offer.id), []);
    assert.deepEqual(await progress(s, offer.id), { current: 1, target: 2, completions: 0 });
    const returned = (await trace(s, back.id)).progress[0];
    assert.deepEqual(
      returned.clawed.map((c: any) => [c.completion, c.cashbackMinor, c.transactionId, c.issuerShareReturnedMinor]),
      [[1, 400, missed.id, 200]],
    );
    assert.equal(
      (await stack.app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`)).body.budget.usedMinor,
      0,
    );
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it("holds a claim's approval whose completions pass the issuer's threshold, whatever amountMinor names", async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, {
      reward: { kind: 'nth_purchase', purchases: 2, rewardMinor: 400, balanceType: 'cashback', repeatable: true },
      startsAt: daysFromNow(-5),
    });
    const s = await shopperOf(stack, merchant.id);
    await buy(s, merchant.id, 2_000);
    const missed = await buy(s, merchant.id, 3_000, {
      merchantId: undefined,
      merchantDescriptor: `NOWHERE ${s.chgId}`,
    });
    const review = await claimAt(s, merchant.id, missed.id, ['needs_review', 'rejected']);
    assert.equal(review.status, 'needs_review', JSON.stringify(review));
    assert.deepEqual(review.computedReward, { cashbackMinor: 400, brandedMinor: 0 });
    const patched = await stack.app.operator('PATCH', `/admin/v1/issuers/${s.issuer.id}`, {
      approvalThresholdMinor: 300,
    });
    assert.equal(patched.status, 200, patched.text);

    // The operator's 1 replaces the purchase's own reward only: the completion's 400 is posted
    // beside it, so the approval posts 401, above the threshold.
    const held = await stack.app.operator('POST', `/admin/v1/claims/${review.id}/approve`, { amountMinor: 1 });
    assert.deepEqual([held.status, held.body.reason], [202, 'claim_above_threshold'], held.text);
    assert.deepEqual(await kept(s, offer.id), [], 'nothing posted while held');
    const support = await nameOperator(stack.app, ['support']);
    const approved = await support.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`);
    assert.equal(approved.status, 200, approved.text);
    assert.deepEqual([approved.body.result.statusCode, approved.body.result.body.status], [200, 'approved']);
    assert.equal(approved.body.result.body.adjustmentIds.length, 1, "the operator's amount");
    assert.deepEqual(await kept(s, offer.id), [[1, 400]]);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it('refuses what a cumulative offer cannot have, and a change of its reward once groups have progress', async () => {
    const merchant = await createMerchant(stack.app);
    const path = `/admin/v1/merchants/${merchant.id}/offers`;
    const reward = {
      kind: 'spend_x_get_y',
      spendMinor: 5_000,
      rewardMinor: 400,
      balanceType: 'cashback',
      repeatable: true,
    };
    const base = { title: 'Spend', startsAt: daysFromNow(-1), reward };
    for (const [extra, field] of [
      [{ maxRewardPerChgMinor: 1_000 }, '/maxRewardPerChgMinor'],
      [{ commission: { rateBps: 100, flatMinor: 0 } }, '/commission'],
      [{ reward: { ...reward, kind: 'nth_purchase', purchases: 2, rewardMinor: 1, rateBps: 5 } }, '/reward'],
    ] as const) {
      const res = await stack.app.operator('POST', path, { ...base, ...extra });
      assert.equal(res.status, 400, res.text);
      assert.ok(
        res.body.details.errors.some((e: any) => e.path.startsWith(field)),
        `${field} in ${JSON.stringify(res.body.details.errors)}`,
      );
    }
    const offer = await createOffer(stack.app, merchant.id, { reward, startsAt: daysFromNow(-1) });
    const changed = await stack.app.operator('PATCH', `${path}/${offer.id}`, {
      reward: { ...reward, spendMinor: 4_000 },
    });
    assert.equal(changed.status, 200, 'no group has progress yet: the offer can change');
    const s = await shopperOf(stack, merchant.id);
    await buy(s, merchant.id, 1_000);
    assertError(
      await stack.app.operator('PATCH', `${path}/${offer.id}`, { maxRedemptionsPerChg: 1 }),
      409,
      'offer_in_progress',
    );
    const title = await stack.app.operator('PATCH', `${path}/${offer.id}`, { title: 'Renamed' });
    assert.equal(title.status, 200, 'other fields still change');
  });
});
