import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  affinityOf,
  habitsOf,
  habitsSpanOf,
  merchantPullOf,
  relevanceOf,
  relevanceWithPull,
  rewardOnMinor,
  typicalPurchaseMinor,
  weightOf,
  type MerchantHistory,
  type RankedOffer,
} from '../../../core/rules/relevance';

const NOW = new Date('2026-06-01T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 24 * 60 * 60 * 1000);

const offer = (over: Partial<RankedOffer> = {}): RankedOffer => ({
  merchantId: 'mp_coffee',
  category: 'dining',
  minSpendMinor: 0,
  cashbackRateBps: 500,
  brandedRateBps: 0,
  tiers: null,
  maxRewardMinor: null,
  ...over,
});
const bought = (merchantId: string, category: string, purchases: number, spendMinor: number, days: number) =>
  ({ merchantId, category, purchases, spendMinor, lastPurchaseAt: daysAgo(days) }) satisfies MerchantHistory;

describe('relevance (core/rules/relevance.ts)', () => {
  it('with no history: the reward on a purchase of 2,500 (or the minimum spend), weight 1,000', () => {
    const none = habitsOf([], NOW);
    assert.equal(typicalPurchaseMinor(offer(), none), 2_500);
    assert.equal(relevanceOf(offer(), none), 125);
    assert.equal(typicalPurchaseMinor(offer({ minSpendMinor: 10_000 }), none), 10_000);
    assert.equal(relevanceOf(offer({ minSpendMinor: 10_000 }), none), 500);
  });

  it("the group's mean purchase at the merchant, weighted by how often and how recently it bought there", () => {
    // Ten purchases averaging 4,000, the latest today: full affinity, weight 1,000 + 2,000.
    const habits = habitsOf([bought('mp_coffee', 'dining', 10, 40_000, 0)], NOW);
    assert.equal(typicalPurchaseMinor(offer(), habits), 4_000);
    assert.equal(weightOf(offer(), habits), 3_000);
    assert.equal(relevanceOf(offer(), habits), 600);
    // Five purchases, the latest 30 days ago (one half-life): 0.5 x 0.5 of the merchant's 2,000.
    const lapsed = habitsOf([bought('mp_coffee', 'dining', 5, 20_000, 30)], NOW);
    assert.equal(weightOf(offer(), lapsed), 1_500);
    assert.equal(relevanceOf(offer(), lapsed), 300);
  });

  it("counts the category's purchases at other merchants, never the offer's own merchant twice", () => {
    const habits = habitsOf(
      [bought('mp_coffee', 'dining', 10, 30_000, 0), bought('mp_diner', 'dining', 10, 80_000, 0)],
      NOW,
    );
    // At the coffee shop: its own history (full) and the diner's in the category (full).
    assert.equal(weightOf(offer(), habits), 4_000);
    // At a third dining merchant: both others are the category, 20 purchases (capped at 10), mean 5,500.
    const third = offer({ merchantId: 'mp_bistro' });
    assert.equal(typicalPurchaseMinor(third, habits), 5_500);
    assert.equal(weightOf(third, habits), 2_000);
    assert.equal(relevanceOf(third, habits), 550);
    // Another category: no pull, and the default purchase.
    const fuel = offer({ merchantId: 'mp_fuel', category: 'fuel' });
    assert.equal(weightOf(fuel, habits), 1_000);
    assert.equal(typicalPurchaseMinor(fuel, habits), 2_500);
  });

  it("pays the typical purchase's tier, nothing below the minimum, and never past the offer's cap", () => {
    const tiers = [
      { minSpendMinor: 2_000, cashbackRateBps: 200, brandedRateBps: 0 },
      { minSpendMinor: 5_000, cashbackRateBps: 800, brandedRateBps: 100 },
    ];
    const tiered = offer({ tiers, cashbackRateBps: 800, brandedRateBps: 100 });
    assert.equal(rewardOnMinor(tiered, 1_999), 0);
    assert.equal(rewardOnMinor(tiered, 4_000), 80);
    assert.equal(rewardOnMinor(tiered, 6_000), 480 + 60);
    assert.equal(rewardOnMinor(offer({ minSpendMinor: 3_000 }), 2_999), 0);
    assert.equal(rewardOnMinor(offer({ maxRewardMinor: 150 }), 10_000), 150);
    assert.equal(rewardOnMinor(offer({ brandedRateBps: 250 }), 1_001), 50 + 25);
  });

  it('affinity grows with purchases up to ten and halves every 30 days', () => {
    assert.equal(affinityOf({ purchases: 0, spendMinor: 0, daysSince: null }), 0);
    assert.equal(affinityOf({ purchases: 1, spendMinor: 1, daysSince: 0 }), 100);
    assert.equal(affinityOf({ purchases: 40, spendMinor: 1, daysSince: 0 }), 1_000);
    assert.equal(affinityOf({ purchases: 10, spendMinor: 1, daysSince: 60 }), 250);
  });

  it('is a whole number of minor units, its weight within 1,000..4,000, and more recent purchases never rank lower', () => {
    const history = fc.record({
      purchases: fc.integer({ min: 1, max: 50 }),
      mean: fc.integer({ min: 1, max: 100_000 }),
      days: fc.integer({ min: 0, max: 400 }),
      sooner: fc.integer({ min: 0, max: 400 }),
      elsewhere: fc.integer({ min: 0, max: 30 }),
      rate: fc.integer({ min: 0, max: 10_000 }),
    });
    fc.assert(
      fc.property(history, (h) => {
        const rows = (days: number) => [
          bought('mp_coffee', 'dining', h.purchases, h.purchases * h.mean, days),
          ...(h.elsewhere > 0 ? [bought('mp_diner', 'dining', h.elsewhere, h.elsewhere * h.mean, days)] : []),
        ];
        const o = offer({ cashbackRateBps: h.rate });
        const later = habitsOf(rows(h.days), NOW);
        const weight = weightOf(o, later);
        assert.ok(weight >= 1_000 && weight <= 4_000);
        const r = relevanceOf(o, later);
        assert.ok(Number.isSafeInteger(r) && r >= 0);
        const recent = habitsOf(rows(Math.max(0, h.days - h.sooner)), NOW);
        assert.ok(relevanceOf(o, recent) >= r);
      }),
    );
  });

  it("reads the same relevance once per merchant as once per offer (the ranked list's shortcut)", () => {
    const place = fc.record({
      merchant: fc.constantFrom('mp_a', 'mp_b', 'mp_c'),
      category: fc.constantFrom('dining', 'travel'),
    });
    const row = fc.record({
      place,
      purchases: fc.integer({ min: 0, max: 30 }),
      mean: fc.integer({ min: 1, max: 50_000 }),
      days: fc.integer({ min: 0, max: 200 }),
    });
    const offered = fc.record({
      place,
      minSpendMinor: fc.integer({ min: 0, max: 20_000 }),
      rate: fc.integer({ min: 0, max: 5_000 }),
      cap: fc.option(fc.integer({ min: 0, max: 2_000 })),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 4 }), offered, (rows, o) => {
        // One row per merchant, as chg_merchant_history keeps them.
        const byMerchant = new Map(rows.map((r) => [r.place.merchant, r]));
        const habits = habitsOf(
          [...byMerchant.values()].map((r) =>
            bought(r.place.merchant, r.place.category, r.purchases, r.purchases * r.mean, r.days),
          ),
          NOW,
        );
        const ranked = offer({
          merchantId: o.place.merchant,
          category: o.place.category,
          minSpendMinor: o.minSpendMinor,
          cashbackRateBps: o.rate,
          maxRewardMinor: o.cap,
        });
        const pull = merchantPullOf(ranked.merchantId, ranked.category, habits);
        assert.equal(relevanceWithPull(ranked, pull), relevanceOf(ranked, habits));
      }),
    );
  });
  it('reads the same habits at every instant of its span, and other habits just outside it', () => {
    const DAY = 24 * 60 * 60 * 1000;
    const row = fc.record({
      merchant: fc.constantFrom('mp_a', 'mp_b', 'mp_c'),
      // Milliseconds before NOW (negative: a purchase dated after the clock reads 0 days).
      agoMs: fc.integer({ min: -3 * DAY, max: 90 * DAY }),
    });
    fc.assert(
      fc.property(fc.array(row, { maxLength: 4 }), fc.double({ min: 0, max: 1, noNaN: true }), (rows, at) => {
        const byMerchant = new Map(rows.map((r) => [r.merchant, r]));
        const history = [...byMerchant.values()].map((r) => ({
          ...bought(r.merchant, 'dining', 2, 5_000, 0),
          lastPurchaseAt: new Date(NOW.getTime() - r.agoMs),
        }));
        const { fromMs, untilMs } = habitsSpanOf(history, NOW);
        assert.ok(fromMs <= NOW.getTime() && NOW.getTime() < untilMs);
        const habitsAt = (ms: number) => habitsOf(history, new Date(ms));
        const now = habitsAt(NOW.getTime());
        if (history.length === 0) return assert.deepEqual([fromMs, untilMs], [-Infinity, Infinity]);
        const low = Number.isFinite(fromMs) ? fromMs : NOW.getTime() - 5 * DAY;
        assert.deepEqual(habitsAt(low + Math.floor(at * (untilMs - 1 - low))), now, 'within the span');
        assert.deepEqual(habitsAt(untilMs - 1), now, 'up to its end');
        assert.notDeepEqual(habitsAt(untilMs), now, 'not at its end');
        if (Number.isFinite(fromMs)) {
          assert.deepEqual(habitsAt(fromMs), now, 'from its start');
          assert.notDeepEqual(habitsAt(fromMs - 1), now, 'not before it');
        }
      }),
    );
  });
});
