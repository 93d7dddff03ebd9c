// Offer mechanics (API.md) on the real API, worker, PostgreSQL and Temporal.
// Tiers: the operator writes the reward whole and is refused what would change it silently; the
// issuer sees the tiers as they pay; a purchase earns at the tier its whole amount reaches, with
// the tier in its match trace, the eligibility preview agreeing; a refund takes back its share of
// what the tier paid. Stacking: the merchant's policy picks the offer that applies, the trace
// says of every qualifying offer why it applied or not, and a change of policy applies to the next
// purchase. Redemptions: past an offer's limit a group's purchases earn nothing from it, until a
// full refund gives a place back. Ranking: a group's settled purchases order its offers by relevance, with each figure
// recomputable by the formula. The books balance throughout.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { buyAt, shopperAt as shopperOf, type Shopper } from '../helpers/shoppers';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';
import { assertError, newIssuer } from '../helpers/app';
import { ACCOMPANYING_KINDS } from '../../core/ledger';
import type { Prisma } from '../../prisma/generated/client';

const TIERS = [
  { minSpendMinor: 2_000, cashbackRateBps: 200, brandedRateBps: 0 },
  { minSpendMinor: 5_000, cashbackRateBps: 300, brandedRateBps: 100 },
  { minSpendMinor: 10_000, cashbackRateBps: 500, brandedRateBps: 0 },
];

describe('offer mechanics', function () {
  this.timeout(180_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.stop());

  const shopperAt = (merchantId: string) => shopperOf(stack, merchantId);
  const buy = (s: Shopper, merchantId: string, amount: number, extra: Record<string, unknown> = {}) =>
    buyAt(stack, s, merchantId, amount, extra);

  const detail = async (s: Shopper, txnId: string) =>
    (await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/transaction/${txnId}/reward-detail`)).body;
  const earned = async (s: Shopper, txnId: string) => (await detail(s, txnId)).earnedAmountMinor;
  const trace = async (s: Shopper, txnId: string) =>
    (await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/transaction/${txnId}/match-trace`)).body.trace;
  const budgetOf = async (merchantId: string, offerId: string) =>
    (await stack.app.operator('GET', `/admin/v1/merchants/${merchantId}/offers/${offerId}`)).body.budget;
  /** A group's whole offer list by relevance, read page by page at `limit` offers a page. */
  const rankedList = async (s: Shopper, limit: number) => {
    const pages: any[] = [];
    let cursor: string | null = null;
    do {
      const query = `sort=relevance&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res: any = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/offers?${query}`);
      assert.equal(res.status, 200, res.text);
      pages.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    return pages;
  };
  /** Reward events [type, offer, amount] and their accompanying transfers [kind, amount], sorted. */
  const rowsOf = async (where: Prisma.RewardEventWhereInput) => {
    const events = await stack.db.rewardEvent.findMany({ where });
    const transfers = await stack.db.ledgerTransfer.findMany({
      where: { rewardEventId: { in: events.map((e) => e.id) }, kind: { in: [...ACCOMPANYING_KINDS] } },
    });
    return [
      ...events.map((e) => [e.type, e.offerId, Number(e.amountMinor)]),
      ...transfers.map((t) => [t.kind, Number(t.amountMinor)]),
    ].sort((x, y) => String(x[0]).localeCompare(String(y[0])) || String(x[1]).localeCompare(String(y[1])));
  };

  it('pays each purchase at the tier its whole amount reaches, says which in the trace, and claws back in share', async () => {
    // Branded balance earned becomes spendable only after the test's purchases, so none draws on it.
    const merchant = await createMerchant(stack.app, {
      brandedBalance: { enabled: true, availabilityDelayDays: 30, expiryDays: 365 },
    });
    const offer = await createOffer(stack.app, merchant.id, {
      reward: { kind: 'tiered', tiers: TIERS },
      minSpendMinor: 1_000,
      startsAt: daysFromNow(-5),
    });
    assert.deepEqual(
      [offer.reward, offer.cashbackRateBps, offer.brandedRateBps],
      [{ kind: 'tiered', tiers: TIERS }, 500, 100],
      "the flat fields carry each rate's highest tier",
    );
    const s = await shopperAt(merchant.id);

    const below = await buy(s, merchant.id, 1_999);
    assert.equal(below.status, 'not_matched');
    assert.deepEqual((await trace(s, below.id)).earn.reasons, ['below_min_spend']);

    const low = await buy(s, merchant.id, 4_999);
    const middle = await buy(s, merchant.id, 5_000);
    const high = await buy(s, merchant.id, 12_345);
    assert.deepEqual(
      [await earned(s, low.id), await earned(s, middle.id), await earned(s, high.id)],
      [99, 200, 617],
      '2 % of 4,999; 3 % + 1 % of 5,000; 5 % of 12,345',
    );
    const highTrace = await trace(s, high.id);
    assert.deepEqual(
      [highTrace.arithmetic.cashbackRateBps, highTrace.arithmetic.brandedRateBps, highTrace.arithmetic.tier],
      [500, 0, TIERS[2]],
    );

    const preview = await s.issuer.call(
      'GET',
      `/api/v2/chg/${s.chgId}/merchant/${merchant.id}/eligibility?amountMinor=5000`,
    );
    assert.equal(preview.status, 200, preview.text);
    assert.equal(preview.body.estimatedRewardMinor, 200, 'the preview pays the same tier as the settlement');

    // About half of the 12,345 purchase returned: that share of its 617 back (floor), not a
    // re-tiering of what is left; the rest returned takes back the rest.
    await buy(s, merchant.id, 6_000, { state: 'refunded', relatedTransactionId: high.externalId });
    assert.equal((await detail(s, high.id)).clawedBackAmountMinor, 299, 'floor(617 x 6,000 / 12,345)');
    await buy(s, merchant.id, 6_345, { state: 'refunded', relatedTransactionId: high.externalId });
    const final = await detail(s, high.id);
    assert.deepEqual([final.status, final.clawedBackAmountMinor], ['reversed', 617]);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it("shows the issuer the tiers as they pay: no branded rate where the merchant's balance cannot be used", async () => {
    const merchant = await createMerchant(stack.app);
    const offer = await createOffer(stack.app, merchant.id, { reward: { kind: 'tiered', tiers: TIERS } });
    const s = await shopperAt(merchant.id);
    const listed = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/offers?merchantId=${merchant.id}`);
    assert.equal(listed.status, 200, listed.text);
    const shown = listed.body.data.find((o: any) => o.id === offer.id);
    assert.deepEqual([shown.brandedRateBps, shown.reward.tiers.map((t: any) => t.brandedRateBps)], [0, [0, 0, 0]]);
  });

  it('refuses what would change a reward silently, naming the field, and changes kinds only whole', async () => {
    const merchant = await createMerchant(stack.app);
    const path = `/admin/v1/merchants/${merchant.id}/offers`;
    const base = { title: 'Tiers', startsAt: daysFromNow(-1) };
    const refused = async (body: object, field: string, method: 'POST' | 'PATCH' = 'POST', at = path) => {
      const res = await stack.app.operator(method, at, body);
      assert.equal(res.status, 400, res.text);
      assert.ok(
        res.body.details.errors.some((e: any) => e.path === field),
        `${field} named in ${JSON.stringify(res.body.details.errors)}`,
      );
    };
    await refused({ ...base, reward: { kind: 'tiered', tiers: TIERS }, cashbackRateBps: 100 }, '/reward');
    await refused(
      { ...base, reward: { kind: 'tiered', tiers: [TIERS[1], TIERS[0]] } },
      '/reward/tiers/1/minSpendMinor',
    );
    await refused({ ...base, reward: { kind: 'tiered', tiers: [] } }, '/reward/tiers');
    await refused(
      { ...base, reward: { kind: 'tiered', tiers: [{ minSpendMinor: 0, cashbackRateBps: 0, brandedRateBps: 0 }] } },
      '/reward/tiers',
    );
    await refused(
      { ...base, reward: { kind: 'tiered', tiers: [{ ...TIERS[0], cashbackRateBps: 10_001 }] } },
      '/reward/tiers/0/cashbackRateBps',
    );
    await refused({ ...base, reward: { kind: 'bogus' } }, '/reward/kind');

    const offer = await createOffer(stack.app, merchant.id, { reward: { kind: 'tiered', tiers: TIERS } });
    const at = `${path}/${offer.id}`;
    await refused({ cashbackRateBps: 100 }, '/cashbackRateBps', 'PATCH', at);
    const percent = await stack.app.operator('PATCH', at, {
      reward: { kind: 'percent', cashbackRateBps: 150, brandedRateBps: 0 },
    });
    assert.equal(percent.status, 200, percent.text);
    assert.deepEqual(
      [percent.body.reward, percent.body.cashbackRateBps],
      [{ kind: 'percent', cashbackRateBps: 150, brandedRateBps: 0 }, 150],
    );
    const flat = await stack.app.operator('PATCH', at, { cashbackRateBps: 250 });
    assert.equal(flat.status, 200, flat.text);
    assert.deepEqual(flat.body.reward, { kind: 'percent', cashbackRateBps: 250, brandedRateBps: 0 });
  });

  it("applies the merchant's stacking: priority over value, then best_of once the operator changes it", async () => {
    const merchant = await createMerchant(stack.app, { stacking: 'priority' });
    assert.equal(merchant.stacking, 'priority');
    const rich = await createOffer(stack.app, merchant.id, { cashbackRateBps: 1000, startsAt: daysFromNow(-5) });
    const favoured = await createOffer(stack.app, merchant.id, {
      cashbackRateBps: 300,
      priority: 5,
      startsAt: daysFromNow(-4),
    });
    assert.deepEqual([rich.priority, favoured.priority], [0, 5]);
    const s = await shopperAt(merchant.id);

    const first = await buy(s, merchant.id, 10_000);
    assert.equal(await earned(s, first.id), 300, 'the higher priority applies though it gives less');
    const firstTrace = await trace(s, first.id);
    assert.deepEqual(firstTrace.stacking, {
      policy: 'priority',
      offers: [
        { offerId: favoured.id, appliedMinor: 300, reason: 'applied' },
        { offerId: rich.id, appliedMinor: 0, reason: 'lower_priority' },
      ],
      applied: [{ offerId: favoured.id, cashbackMinor: 300, brandedMinor: 0, cappedBy: null }],
    });
    const preview = await s.issuer.call(
      'GET',
      `/api/v2/chg/${s.chgId}/merchant/${merchant.id}/eligibility?amountMinor=10000`,
    );
    assert.deepEqual([preview.body.winningOfferId, preview.body.estimatedRewardMinor], [favoured.id, 300]);

    const changed = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { stacking: 'best_of' });
    assert.equal(changed.status, 200, changed.text);
    const second = await buy(s, merchant.id, 10_000);
    assert.equal(await earned(s, second.id), 1000);
    assert.deepEqual((await trace(s, second.id)).stacking.offers, [
      { offerId: rich.id, appliedMinor: 1000, reason: 'applied' },
      { offerId: favoured.id, appliedMinor: 0, reason: 'lower_value' },
    ]);
    assert.equal(await earned(s, first.id), 300, 'a purchase already decided stays as it was');

    const bad = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { stacking: 'stacked' });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.details.errors[0].path, '/stacking');
    const badPriority = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${rich.id}`, {
      priority: 1.5,
    });
    assert.equal(badPriority.status, 400, badPriority.text);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it("stacks the merchant's offers under its cap, each with its own budget, funding and clawback", async () => {
    const merchant = await createMerchant(stack.app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 30, expiryDays: 365 },
    });
    const uncapped = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { stacking: 'stack' });
    assertError(uncapped, 400, 'stack_cap_required');
    assert.equal(uncapped.body.details.errors[0].path, '/stackCapBps');
    const tooHigh = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { stackCapBps: 10_001 });
    assert.equal(tooHigh.status, 400, tooHigh.text);
    const set = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, {
      stacking: 'stack',
      stackCapBps: 800,
    });
    assert.deepEqual([set.status, set.body.stacking, set.body.stackCapBps], [200, 'stack', 800], set.text);
    const budgeted = await createOffer(stack.app, merchant.id, {
      cashbackRateBps: 500,
      priority: 2,
      budgetMinor: 10_000,
      startsAt: daysFromNow(-5),
    });
    const funded = await createOffer(stack.app, merchant.id, {
      cashbackRateBps: 200,
      brandedRateBps: 200,
      priority: 1,
      funding: { issuerShareBps: 5000 },
      commission: { rateBps: 100, flatMinor: 0 },
      startsAt: daysFromNow(-5),
    });
    const crowded = await createOffer(stack.app, merchant.id, { cashbackRateBps: 300, startsAt: daysFromNow(-5) });
    const s = await shopperAt(merchant.id);
    const seen = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/merchant/${merchant.id}`);
    assert.deepEqual([seen.body.stacking, seen.body.stackCapBps], ['stack', 800], seen.text);
    const preview = await s.issuer.call(
      'GET',
      `/api/v2/chg/${s.chgId}/merchant/${merchant.id}/eligibility?amountMinor=10000`,
    );
    assert.deepEqual([preview.body.winningOfferId, preview.body.estimatedRewardMinor], [budgeted.id, 800]);

    // 8 % of 10,000 = 800: the budgeted offer's 500, the funded one's 400 cut to 300 (branded
    // first: 200 cashback, 100 branded), the third nothing.
    const purchase = await buy(s, merchant.id, 10_000);
    assert.equal(await earned(s, purchase.id), 800);
    const t = await trace(s, purchase.id);
    assert.deepEqual(t.stacking, {
      policy: 'stack',
      stackCapBps: 800,
      offers: [
        { offerId: budgeted.id, appliedMinor: 500, reason: 'applied' },
        { offerId: funded.id, appliedMinor: 300, reason: 'stack_cap' },
        { offerId: crowded.id, appliedMinor: 0, reason: 'stack_cap' },
      ],
      applied: [
        { offerId: budgeted.id, cashbackMinor: 500, brandedMinor: 0, cappedBy: null },
        { offerId: funded.id, cashbackMinor: 200, brandedMinor: 100, cappedBy: 'stack' },
      ],
    });
    assert.deepEqual(t.budgetUses, [
      { offerId: budgeted.id, periodKey: '', amountMinor: 500, usedMinor: 0, cappedByBudget: false },
    ]);
    const own = { transactionId: purchase.id, type: { in: ['cashback_earned', 'branded_earned'] } };
    const [first, second] = [budgeted.id, funded.id].sort();
    assert.deepEqual(await rowsOf(own), [
      ['branded_earned', funded.id, 100],
      ['cashback_earned', first, first === budgeted.id ? 500 : 200],
      ['cashback_earned', second, second === budgeted.id ? 500 : 200],
      // The funded offer's share of each part, and its commission: the budgeted offer, ranked
      // first, charges none.
      ['commission_charged', 100],
      ['issuer_share_branded', 50],
      ['issuer_share_cashback', 100],
    ]);
    const commission = await stack.db.ledgerTransfer.findFirstOrThrow({
      where: { transactionId: purchase.id, kind: 'commission_charged' },
    });
    const charged = await stack.db.rewardEvent.findUniqueOrThrow({ where: { id: commission.rewardEventId! } });
    assert.equal(charged.offerId, funded.id);
    assert.equal((await budgetOf(merchant.id, budgeted.id)).usedMinor, 500);

    // Half refunded: each offer gives back half of its own; the budget gets its offer's half.
    const half = await buy(s, merchant.id, 5_000, { state: 'refunded', relatedTransactionId: purchase.externalId });
    assert.deepEqual(await rowsOf({ sourceEventId: half.id }), [
      ['branded_clawed_back', funded.id, 50],
      ['cashback_clawed_back', first, first === budgeted.id ? 250 : 100],
      ['cashback_clawed_back', second, second === budgeted.id ? 250 : 100],
      ['commission_returned', 50],
      ['issuer_share_returned', 75],
    ]);
    assert.equal((await budgetOf(merchant.id, budgeted.id)).usedMinor, 250);
    const rest = await buy(s, merchant.id, 5_000, { state: 'refunded', relatedTransactionId: purchase.externalId });
    assert.equal((await trace(s, rest.id)).budgetReturnedMinor, 250);
    assert.equal((await budgetOf(merchant.id, budgeted.id)).usedMinor, 0);
    assert.equal((await detail(s, purchase.id)).status, 'reversed');
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it('stops rewarding a group past the redemption limit, and gives the place back when a purchase is refunded in full', async () => {
    const merchant = await createMerchant(stack.app);
    const limited = await createOffer(stack.app, merchant.id, {
      cashbackRateBps: 500,
      maxRedemptionsPerChg: 2,
      startsAt: daysFromNow(-5),
    });
    assert.equal(limited.maxRedemptionsPerChg, 2);
    const s = await shopperAt(merchant.id);
    const listed = await s.issuer.call('GET', `/api/v2/chg/${s.chgId}/offers?merchantId=${merchant.id}`);
    assert.equal(listed.body.data.find((o: any) => o.id === limited.id).maxRedemptionsPerChg, 2);

    const first = await buy(s, merchant.id, 2_000);
    const second = await buy(s, merchant.id, 3_000);
    const third = await buy(s, merchant.id, 4_000);
    assert.deepEqual([first.status, second.status, third.status], ['matched', 'matched', 'not_matched']);
    assert.deepEqual((await trace(s, third.id)).earn.reasons, ['redemption_limit_reached']);
    const preview = await s.issuer.call(
      'GET',
      `/api/v2/chg/${s.chgId}/merchant/${merchant.id}/eligibility?amountMinor=1000`,
    );
    assert.deepEqual([preview.body.eligible, preview.body.reasons], [false, ['redemption_limit_reached']]);

    // A partial refund keeps the place; a full one gives it back.
    await buy(s, merchant.id, 1_000, { state: 'refunded', relatedTransactionId: first.externalId });
    assert.equal((await buy(s, merchant.id, 1_500)).status, 'not_matched');
    await buy(s, merchant.id, 1_000, { state: 'refunded', relatedTransactionId: first.externalId });
    const after = await buy(s, merchant.id, 5_000);
    assert.deepEqual([after.status, await earned(s, after.id)], ['matched', 250]);
    assert.equal((await buy(s, merchant.id, 100)).status, 'not_matched');
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });

  it("ranks a group's offers by relevance from its settled purchases, each figure as the formula gives it", async () => {
    // Merchants only a new issuer sees, so the list holds these offers alone.
    const owner = await newIssuer(stack.app, 'sandbox');
    const issuerIds = [owner.id];
    const [a, b, c] = [
      await createMerchant(stack.app, { category: 'dining', issuerIds }),
      await createMerchant(stack.app, { category: 'dining', issuerIds }),
      await createMerchant(stack.app, { category: 'fuel', issuerIds }),
    ];
    const start = { startsAt: daysFromNow(-5) };
    const offers = [
      await createOffer(stack.app, a.id, { cashbackRateBps: 200, ...start }),
      await createOffer(stack.app, b.id, { cashbackRateBps: 500, ...start }),
      await createOffer(stack.app, c.id, { cashbackRateBps: 300, ...start }),
    ];
    const name = (id: string) => ['a', 'b', 'c'][offers.findIndex((o) => o.id === id)];
    const ranked = async (s: Shopper, limit = 50) =>
      (await rankedList(s, limit)).filter((o) => name(o.id)).map((o) => [name(o.id), o.relevance]);

    // No history: the reward on a purchase of 2,500, weight 1,000.
    const newcomer = await shopperOf(stack, a.id, owner);
    assert.deepEqual(await ranked(newcomer), [
      ['b', 125],
      ['c', 75],
      ['a', 50],
    ]);

    const regular = await shopperOf(stack, a.id, owner);
    for (let i = 0; i < 3; i++) assert.equal((await buy(regular, a.id, 10_000)).status, 'matched');
    const row = await stack.db.chgMerchantHistory.findUniqueOrThrow({
      where: { chgId_merchantId: { chgId: regular.chgId, merchantId: a.id } },
    });
    assert.deepEqual([row.purchases, row.spendMinor], [3, 30_000n]);
    // a: 200 on its typical 10,000, weight 1,000 + 2,000 x 0.3 = 1,600 -> 320. b: the category's
    // typical 10,000 at 5 % = 500, weight 1,000 + 1,000 x 0.3 -> 650. c: no fuel history -> 75.
    const expected = [
      ['b', 650],
      ['a', 320],
      ['c', 75],
    ];
    assert.deepEqual(await ranked(regular), expected);
    assert.deepEqual(await ranked(regular, 1), expected, 'page by page, the same order');
    assert.deepEqual(
      await ranked(newcomer),
      [
        ['b', 125],
        ['c', 75],
        ['a', 50],
      ],
      "another group's purchases move nothing",
    );

    const plain = await regular.issuer.call('GET', `/api/v2/chg/${regular.chgId}/offers`);
    assert.ok(
      plain.body.data.every((o: any) => !('relevance' in o)),
      'relevance only in a ranked list',
    );
    await assertLedgerHealthy(stack.db);
  });
  it("reads the enrolments of targeted offers a group's history brings into a ranked page", async () => {
    // Twenty dining offers pay most to a group without history. For a group that buys fuel, the
    // offers of its fuel merchant come first (their enrolments read with the group's view), then
    // another fuel merchant's, lifted by the category alone from past where the page would reach
    // without history (their enrolments read after the view).
    const owner = await newIssuer(stack.app, 'sandbox');
    const issuerIds = [owner.id];
    const dining = await createMerchant(stack.app, { category: 'dining', issuerIds });
    const fuel = await createMerchant(stack.app, { category: 'fuel', issuerIds });
    const nearbyFuel = await createMerchant(stack.app, { category: 'fuel', issuerIds });
    const start = { startsAt: daysFromNow(-5) };
    const auto = { activation: 'auto', ...start };
    const nobody = { audience: { segments: ['nobody-has-this'] }, ...start };
    const filler: string[] = [];
    for (let i = 0; i < 20; i++)
      filler.push((await createOffer(stack.app, dining.id, { cashbackRateBps: 500, ...start })).id);
    const treated = await createOffer(stack.app, fuel.id, { cashbackRateBps: 300, ...auto });
    const outside = await createOffer(stack.app, fuel.id, { cashbackRateBps: 900, ...nobody });
    const nearby = await createOffer(stack.app, nearbyFuel.id, { cashbackRateBps: 350, ...auto });
    const nearbyOutside = await createOffer(stack.app, nearbyFuel.id, { cashbackRateBps: 900, ...nobody });
    const s = await shopperOf(stack, fuel.id, owner);
    for (let i = 0; i < 3; i++) assert.equal((await buy(s, fuel.id, 10_000)).status, 'matched');
    // Live after the purchases: the group has no enrolment in them until its list is read.
    const later = await createOffer(stack.app, fuel.id, { cashbackRateBps: 400, ...auto });
    const nearbyLater = await createOffer(stack.app, nearbyFuel.id, { cashbackRateBps: 320, ...auto });
    const targeted = [treated, outside, nearby, nearbyOutside, later, nearbyLater].map((o) => o.id);
    const arms = async () =>
      Object.fromEntries(
        (await stack.db.offerEnrolment.findMany({ where: { chgId: s.chgId, offerId: { in: targeted } } })).map((e) => [
          e.offerId,
          e.arm,
        ]),
      );
    const before = await arms();
    assert.deepEqual([before[later.id], before[nearbyLater.id]], [undefined, undefined]);

    // Offers of merchants every issuer sees, which other tests create, are left out.
    const ranked = async (limit: number) =>
      (await rankedList(s, limit)).filter((o) => mine.has(o.id)).map((o) => [o.id, o.relevance]);
    // Fuel: 3 purchases today. At its merchant, weight 1,600 on the typical 10,000: 4 % -> 640,
    // 3 % -> 480; at the other, weight 1,300: 3.5 % -> 455, 3.2 % -> 416. An offer whose audience
    // the group is outside is never shown, however much it would pay.
    const expected = [
      [later.id, 640],
      [treated.id, 480],
      [nearby.id, 455],
      [nearbyLater.id, 416],
      ...filler.map((id) => [id, 125]),
    ];
    const mine = new Set([...filler, ...targeted]);
    // The first read enrols the group in the offers it had no enrolment in.
    assert.deepEqual(await ranked(4), expected);
    assert.deepEqual(await arms(), {
      [treated.id]: 'treated',
      [outside.id]: null,
      [nearby.id]: 'treated',
      [nearbyOutside.id]: null,
      [later.id]: 'treated',
      [nearbyLater.id]: 'treated',
    });
    assert.deepEqual(await ranked(3), expected, 'page by page, the same order');
    assert.deepEqual(await ranked(50), expected);
  });
  it("ranks again when the group's history moves or a day passes, reading the enrolments the new order reaches", async () => {
    // Twenty dining offers pay most to a group without history; a grocery merchant's two targeted
    // offers come after them. Purchases at the grocer lift its offers to the top of the page, past
    // the reach the order read before them gave the enrolments.
    const owner = await newIssuer(stack.app, 'sandbox');
    const issuerIds = [owner.id];
    const dining = await createMerchant(stack.app, { category: 'dining', issuerIds });
    const grocer = await createMerchant(stack.app, { category: 'grocery', issuerIds });
    const start = { startsAt: daysFromNow(-5) };
    const filler: string[] = [];
    for (let i = 0; i < 20; i++)
      filler.push((await createOffer(stack.app, dining.id, { cashbackRateBps: 500, ...start })).id);
    const auto = await createOffer(stack.app, grocer.id, { cashbackRateBps: 100, activation: 'auto', ...start });
    const nobody = await createOffer(stack.app, grocer.id, {
      cashbackRateBps: 900,
      audience: { segments: ['nobody-has-this'] },
      ...start,
    });
    const mine = new Set([...filler, auto.id, nobody.id]);
    const s = await shopperOf(stack, grocer.id, owner);
    const ranked = async (limit: number) =>
      (await rankedList(s, limit)).filter((o) => mine.has(o.id)).map((o) => [o.id, o.relevance]);
    const dinersFirst = [...filler.map((id) => [id, 125]), [auto.id, 25]];
    assert.deepEqual(await ranked(4), dinersFirst);
    assert.deepEqual(await ranked(4), dinersFirst, 'read again, the same');

    for (let i = 0; i < 3; i++) await buy(s, grocer.id, 10_000);
    // The grocer's 1 % on its typical 10,000, weight 1,000 + 2,000 x 0.3 = 1,600 -> 160; the
    // offer whose audience the group is outside is never shown, however much it would pay.
    assert.deepEqual(await ranked(4), [[auto.id, 160], ...filler.map((id) => [id, 125])]);
    assert.deepEqual(await ranked(50), [[auto.id, 160], ...filler.map((id) => [id, 125])]);

    // Thirty days on, the purchases count half: weight 1,000 + 2,000 x 0.15 = 1,300 -> 130.
    const advanced = await s.issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 30 });
    assert.equal(advanced.status, 200, advanced.text);
    assert.deepEqual(await ranked(4), [[auto.id, 130], ...filler.map((id) => [id, 125])]);
  });
});
