// The relevance order of a group's offer list (api/catalogue/ranked-offers.ts): highest score
// first, a tie by the offer's place in the held catalogue, whether the scores fit the packed
// numeric sort or take the comparison path; and the list ranked from the group's history agrees
// with the formula applied to every offer on its own (core/rules/relevance.ts, relevanceOf),
// though only the offers the history touches are scored again.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { rankedOffers, relevanceOrder, unrankedOffers } from '../../api/catalogue/ranked-offers';
import type { CatalogueOffer } from '../../api/catalogue/issuer-catalogue';
import { habitsOf, relevanceOf, type MerchantHistory, type RankedOffer } from '../../core/rules/relevance';
import type { Tier } from '../../core/rules/reward-kinds';

/** The order as a plain comparison sort gives it. */
function byComparison(scores: number[]): number[] {
  return scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
}

describe('relevance order', () => {
  it('orders by score, highest first, and a tie by held index', () => {
    assert.deepEqual([...relevanceOrder(Float64Array.from([5, 9, 5, 0, 9]))], [1, 4, 0, 2, 3]);
  });

  it('agrees with a comparison sort for any scores', () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 2_000_000_000 }), { maxLength: 600 }), (scores) => {
        assert.deepEqual([...relevanceOrder(Float64Array.from(scores))], byComparison(scores));
      }),
      { numRuns: 300 },
    );
  });

  it('takes the comparison path when a packed position would not be exact', () => {
    const huge = Number.MAX_SAFE_INTEGER / 2;
    const scores = [huge, 3, huge, huge - 1, 0];
    assert.deepEqual([...relevanceOrder(Float64Array.from(scores))], byComparison(scores));
  });

  it('orders nothing when there is nothing', () => {
    assert.equal(relevanceOrder(new Float64Array(0)).length, 0);
  });

  describe("a group's ranked list", () => {
    const NOW = new Date('2026-06-01T12:00:00Z');
    const MERCHANTS = ['mp_a', 'mp_b', 'mp_c', 'mp_d', 'mp_e', 'mp_f'];
    const CATEGORIES = ['dining', 'travel', 'grocery'];
    const categoryOf = (merchantId: string) => CATEGORIES[MERCHANTS.indexOf(merchantId) % CATEGORIES.length];

    interface Drawn {
      merchant: number;
      rate: number;
      minSpend: number;
      cap: number | null;
      tiers: Tier[] | null;
    }
    const drawnOffer = fc.record({
      merchant: fc.nat({ max: MERCHANTS.length - 1 }),
      rate: fc.integer({ min: 1, max: 2_000 }),
      minSpend: fc.constantFrom(0, 1_000, 5_000),
      cap: fc.option(fc.integer({ min: 1, max: 500 })),
      tiers: fc.option(
        fc.array(
          fc.record({
            minSpendMinor: fc.integer({ min: 0, max: 10_000 }),
            cashbackRateBps: fc.integer({ min: 0, max: 1_500 }),
            brandedRateBps: fc.constant(0),
          }),
          { minLength: 1, maxLength: 3 },
        ),
      ),
    });
    const drawnHistory = fc.uniqueArray(
      fc.record({
        // One merchant beyond the catalogue's: the group's purchases where no offer is.
        merchant: fc.nat({ max: MERCHANTS.length }),
        purchases: fc.integer({ min: 1, max: 30 }),
        spend: fc.integer({ min: 100, max: 400_000 }),
        days: fc.nat({ max: 200 }),
      }),
      { selector: (h) => h.merchant, maxLength: 5 },
    );

    function catalogue(drawn: Drawn[]): CatalogueOffer[] {
      // The held catalogue's order: by start, then id.
      return drawn.map((d, i) => {
        const merchantId = MERCHANTS[d.merchant];
        return {
          id: `ofr_${String(i).padStart(4, '0')}`,
          merchantId,
          merchantCategory: categoryOf(merchantId),
          cashbackRateBps: d.tiers ? 0 : d.rate,
          brandedRateBps: 0,
          minSpendMinor: BigInt(d.minSpend),
          maxRewardMinor: d.cap === null ? null : BigInt(d.cap),
          reward: d.tiers ? { kind: 'tiered', tiers: d.tiers } : null,
          startsAt: new Date(NOW.getTime() - (drawn.length - i) * 60_000),
          merchant: { status: 'active', brandedEnabled: true, brandedAvailabilityDelayDays: 0, brandedExpiryDays: 365 },
        } as unknown as CatalogueOffer;
      });
    }

    /** Every offer scored by the formula on its own, ordered by comparison. */
    function expected(held: CatalogueOffer[], history: MerchantHistory[]) {
      const habits = habitsOf(history, NOW);
      const scores = held.map((o) => {
        const reward = o.reward as { tiers: Tier[] } | null;
        const terms: RankedOffer = {
          merchantId: o.merchantId,
          category: o.merchantCategory,
          minSpendMinor: Number(o.minSpendMinor),
          cashbackRateBps: o.cashbackRateBps,
          brandedRateBps: o.brandedRateBps,
          tiers: reward?.tiers ?? null,
          maxRewardMinor: o.maxRewardMinor === null ? null : Number(o.maxRewardMinor),
        };
        return relevanceOf(terms, habits);
      });
      return { ids: byComparison(scores).map((i) => held[i].id), scores };
    }

    it('orders and scores every offer as the formula does on its own', () => {
      fc.assert(
        fc.property(fc.array(drawnOffer, { maxLength: 40 }), drawnHistory, (drawn, bought) => {
          const held = catalogue(drawn);
          const history: MerchantHistory[] = bought.map((h) => {
            const merchantId = h.merchant < MERCHANTS.length ? MERCHANTS[h.merchant] : 'mp_elsewhere';
            return {
              merchantId,
              category: merchantId === 'mp_elsewhere' ? 'dining' : categoryOf(merchantId),
              purchases: h.purchases,
              spendMinor: h.spend,
              lastPurchaseAt: new Date(NOW.getTime() - h.days * 24 * 60 * 60 * 1000),
            };
          });
          const want = expected(held, history);
          // Ranked twice: the second reads the group-independent terms already kept.
          for (let round = 0; round < 2; round++) {
            const ranked = rankedOffers(held, history, NOW, 0);
            assert.deepEqual(
              ranked.offers.map((o) => o.id),
              want.ids,
            );
            held.forEach((o, i) => assert.equal(ranked.relevance.get(o.id), want.scores[i]));
            assert.deepEqual(
              Array.from(ranked.keys),
              want.ids.map((id) => -want.scores[held.findIndex((o) => o.id === id)]),
            );
          }
        }),
        { numRuns: 300 },
      );
    });

    it('ranks a group without history as every group without history', () => {
      const held = catalogue([
        { merchant: 0, rate: 100, minSpend: 0, cap: null, tiers: null },
        { merchant: 1, rate: 300, minSpend: 5_000, cap: null, tiers: null },
        { merchant: 2, rate: 200, minSpend: 0, cap: 10, tiers: null },
      ]);
      const unranked = unrankedOffers(held, 0);
      assert.deepEqual(
        unranked.offers.map((o) => o.id),
        expected(held, []).ids,
      );
      assert.deepEqual(
        rankedOffers(held, [], NOW, 0).offers.map((o) => o.id),
        unranked.offers.map((o) => o.id),
      );
    });
  });
});
