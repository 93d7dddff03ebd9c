// Offer mechanics (API.md) on the real API, worker, PostgreSQL and Temporal.
// Tiers: the operator writes the reward whole and is refused what would change it silently; the
// issuer sees the tiers as they pay; a purchase earns at the tier its whole amount reaches, with
// the tier in its match trace, the eligibility preview agreeing; a refund takes back its share of
// what the tier paid. Stacking: the merchant's policy picks the offer that applies, the trace
// says of every qualifying offer why it applied or not, and a change of policy applies to the next
// purchase. The books balance throughout.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import { buyAt, shopperAt as shopperOf, type Shopper } from '../helpers/shoppers';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';

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

    const bad = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { stacking: 'stack' });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.details.errors[0].path, '/stacking');
    const badPriority = await stack.app.operator('PATCH', `/admin/v1/merchants/${merchant.id}/offers/${rich.id}`, {
      priority: 1.5,
    });
    assert.equal(badPriority.status, 400, badPriority.text);
    await assertLedgerHealthy(stack.db, s.issuer.id);
  });
});
