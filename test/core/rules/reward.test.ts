import assert from 'node:assert/strict';
import { computeOfferReward, type RewardTerms } from '../../../core/rules/reward';

const terms = (t: Partial<RewardTerms>): RewardTerms => ({
  cashbackRateBps: 0,
  brandedRateBps: 0,
  maxRewardMinor: null,
  maxRewardPerChgMinor: null,
  ...t,
});

describe('computeOfferReward', () => {
  it('floors each component separately', () => {
    const r = computeOfferReward(terms({ cashbackRateBps: 333, brandedRateBps: 150 }), 999, 0);
    assert.deepEqual([r.cashbackMinor, r.brandedMinor, r.totalMinor, r.cappedBy], [33, 14, 47, null]);
  });

  it('never overflows or uses floats on large amounts', () => {
    const amount = Number.MAX_SAFE_INTEGER;
    const r = computeOfferReward(terms({ cashbackRateBps: 9999 }), amount, 0);
    assert.equal(BigInt(r.cashbackMinor), (BigInt(amount) * 9999n) / 10000n);
  });

  it('applies the per-transaction cap, cutting branded balance first', () => {
    const r = computeOfferReward(terms({ cashbackRateBps: 500, brandedRateBps: 500, maxRewardMinor: 700 }), 10_000, 0);
    assert.deepEqual(
      [r.cashbackMinor, r.brandedMinor, r.totalMinor, r.uncappedMinor, r.cappedBy],
      [500, 200, 700, 1000, 'transaction'],
    );
  });

  it('cuts cashback once branded balance is gone', () => {
    const r = computeOfferReward(terms({ cashbackRateBps: 500, brandedRateBps: 100, maxRewardMinor: 300 }), 10_000, 0);
    assert.deepEqual([r.cashbackMinor, r.brandedMinor], [300, 0]);
  });

  it('applies the per-group cap to what is left of it', () => {
    const r = computeOfferReward(terms({ cashbackRateBps: 1000, maxRewardPerChgMinor: 1500 }), 10_000, 1200);
    assert.deepEqual([r.totalMinor, r.cappedBy], [300, 'chg']);
    assert.equal(
      computeOfferReward(terms({ cashbackRateBps: 1000, maxRewardPerChgMinor: 1500 }), 10_000, 1600).totalMinor,
      0,
    );
  });

  it('caps by what is left of the budget, cutting branded balance first', () => {
    const r = computeOfferReward(terms({ cashbackRateBps: 500, brandedRateBps: 500 }), 10_000, 0, 700);
    assert.deepEqual([r.cashbackMinor, r.brandedMinor, r.totalMinor, r.cappedBy], [500, 200, 700, 'budget']);
    const none = computeOfferReward(terms({ cashbackRateBps: 500 }), 10_000, 0, 0);
    assert.deepEqual([none.totalMinor, none.cappedBy], [0, 'budget']);
    // A budget that does not bind is not the cap; the tighter of the caps is.
    assert.equal(computeOfferReward(terms({ cashbackRateBps: 500 }), 10_000, 0, 5_000).cappedBy, null);
    assert.equal(
      computeOfferReward(terms({ cashbackRateBps: 500, maxRewardMinor: 100 }), 10_000, 0, 300).cappedBy,
      'transaction',
    );
    assert.throws(() => computeOfferReward(terms({ cashbackRateBps: 500 }), 10_000, 0, -1), RangeError);
  });

  it('uses the tighter of the two caps', () => {
    const r = computeOfferReward(
      terms({ cashbackRateBps: 1000, maxRewardMinor: 200, maxRewardPerChgMinor: 1000 }),
      10_000,
      900,
    );
    assert.deepEqual([r.totalMinor, r.cappedBy], [100, 'chg']);
  });

  it('rejects unsafe or negative money and out-of-range rates', () => {
    assert.throws(() => computeOfferReward(terms({ cashbackRateBps: 1 }), 1.5, 0), RangeError);
    assert.throws(() => computeOfferReward(terms({ cashbackRateBps: 1 }), -1, 0), RangeError);
    assert.throws(() => computeOfferReward(terms({ cashbackRateBps: 1 }), 2 ** 60, 0), RangeError);
    assert.throws(() => computeOfferReward(terms({ cashbackRateBps: 10_001 }), 100, 0), RangeError);
  });
});
