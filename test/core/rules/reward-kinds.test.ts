import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  completionDelta,
  completionRewardMinor,
  completionsOf,
  progressOf,
  ratesFor,
  rewardedCompletions,
  type CumulativeReward,
} from '../../../core/rules/reward-kinds';

const spend = (repeatable: boolean): CumulativeReward => ({
  kind: 'spend_x_get_y',
  spendMinor: 10_000,
  rewardMinor: 1_000,
  balanceType: 'cashback',
  repeatable,
});
const nth = (repeatable: boolean, reward: { rewardMinor?: number; rateBps?: number } = { rewardMinor: 500 }) =>
  ({ kind: 'nth_purchase', purchases: 3, balanceType: 'branded', repeatable, ...reward }) as CumulativeReward;

describe('reward kinds (core/rules/reward-kinds.ts)', () => {
  it('pays a tiered purchase at the highest minimum its amount reaches, and nothing below the lowest', () => {
    const tiered = {
      kind: 'tiered' as const,
      tiers: [
        { minSpendMinor: 5_000, cashbackRateBps: 300, brandedRateBps: 0 },
        { minSpendMinor: 1_000, cashbackRateBps: 100, brandedRateBps: 50 },
        { minSpendMinor: 10_000, cashbackRateBps: 500, brandedRateBps: 100 },
      ],
    };
    assert.equal(ratesFor(tiered, 999), null);
    assert.deepEqual(ratesFor(tiered, 1_000), { cashbackRateBps: 100, brandedRateBps: 50 });
    assert.deepEqual(ratesFor(tiered, 9_999), { cashbackRateBps: 300, brandedRateBps: 0 });
    assert.deepEqual(ratesFor(tiered, 10_000), { cashbackRateBps: 500, brandedRateBps: 100 });
    assert.deepEqual(ratesFor({ kind: 'percent', cashbackRateBps: 200, brandedRateBps: 0 }, 0), {
      cashbackRateBps: 200,
      brandedRateBps: 0,
    });
  });

  it('counts completions once for a one-off offer and once per target for a repeatable one', () => {
    assert.deepEqual(
      [0, 9_999, 10_000, 29_999, 30_000].map((m) => completionsOf(spend(false), m)),
      [0, 0, 1, 1, 1],
    );
    assert.deepEqual(
      [0, 9_999, 10_000, 29_999, 30_000].map((m) => completionsOf(spend(true), m)),
      [0, 0, 1, 2, 3],
    );
    assert.deepEqual(
      [2, 3, 5, 6].map((m) => completionsOf(nth(true), m)),
      [0, 1, 1, 2],
    );
    assert.equal(rewardedCompletions(spend(true), 50_000, 2), 2);
    assert.throws(() => completionsOf(spend(true), -1), RangeError);
    assert.throws(() => completionsOf({ ...spend(true), spendMinor: 0 } as CumulativeReward, 5), RangeError);
  });

  it('shows progress towards the next completion, and the target once nothing more can be earned', () => {
    assert.deepEqual(progressOf(spend(true), 25_000, null), { current: 5_000, target: 10_000, completions: 2 });
    assert.deepEqual(progressOf(spend(true), 25_000, 2), { current: 10_000, target: 10_000, completions: 2 });
    assert.deepEqual(progressOf(spend(false), 7_000, null), { current: 7_000, target: 10_000, completions: 0 });
    assert.deepEqual(progressOf(spend(false), 25_000, null), { current: 10_000, target: 10_000, completions: 1 });
    assert.deepEqual(progressOf(nth(true), 4, 5), { current: 1, target: 3, completions: 1 });
  });

  it("gives a completion its fixed reward, or the rate of the completing purchase's amount, floored", () => {
    assert.equal(completionRewardMinor(spend(false), 12_345), 1_000);
    assert.equal(completionRewardMinor(nth(false), 12_345), 500);
    assert.equal(completionRewardMinor(nth(false, { rateBps: 1_000 }), 12_345), 1_234);
    assert.throws(() => completionRewardMinor(nth(false, { rateBps: 10_001 }), 100), RangeError);
  });

  it('posts and claws back exactly the capped completions of the final measure, in any order of purchases and refunds', () => {
    const reward = fc.oneof(
      fc.record({
        kind: fc.constant('spend_x_get_y' as const),
        spendMinor: fc.integer({ min: 1, max: 20_000 }),
        rewardMinor: fc.integer({ min: 0, max: 5_000 }),
        balanceType: fc.constant('cashback' as const),
        repeatable: fc.boolean(),
      }),
      fc.record({
        kind: fc.constant('nth_purchase' as const),
        purchases: fc.integer({ min: 1, max: 6 }),
        rewardMinor: fc.integer({ min: 0, max: 5_000 }),
        balanceType: fc.constant('branded' as const),
        repeatable: fc.boolean(),
      }),
    );
    // Each step moves the measure up (a purchase) or down (a refund), never below zero.
    const steps = fc.array(fc.integer({ min: -30_000, max: 30_000 }), { maxLength: 40 });
    fc.assert(
      fc.property(reward, fc.option(fc.integer({ min: 0, max: 5 })), steps, (r, max, moves) => {
        let measure = 0;
        let rewards = 0;
        for (const move of moves) {
          const after = Math.max(0, measure + (r.kind === 'nth_purchase' ? Math.sign(move) : move));
          rewards += completionDelta(r, measure, after, max);
          measure = after;
          assert.ok(rewards >= 0, 'never more clawed back than earned');
        }
        assert.equal(rewards, Math.min(max ?? Infinity, completionsOf(r, measure)));
      }),
      { numRuns: 500 },
    );
  });
});
