import assert from 'node:assert/strict';
import fc from 'fast-check';
import { contributionOf, rewardedCompletions, type CumulativeReward } from '../../../core/rules/reward-kinds';
import {
  completedOf,
  progressOnRefund,
  reviewedProgress,
  progressOnSettlement,
  type CumulativeTerms,
  type StoredProgress,
} from '../../../core/rules/progress';

const spendTerms = (over: Partial<CumulativeTerms> = {}, repeatable = true): CumulativeTerms => ({
  offerId: 'ofr_spend',
  reward: { kind: 'spend_x_get_y', spendMinor: 10_000, rewardMinor: 1_000, balanceType: 'cashback', repeatable },
  minSpendMinor: 0,
  maxRedemptionsPerChg: null,
  maxRewardMinor: null,
  ...over,
});
const nthTerms = (reward: Partial<Extract<CumulativeReward, { kind: 'nth_purchase' }>> = {}): CumulativeTerms => ({
  offerId: 'ofr_nth',
  reward: { kind: 'nth_purchase', purchases: 3, rewardMinor: 500, balanceType: 'branded', repeatable: true, ...reward },
  minSpendMinor: 2_000,
  maxRedemptionsPerChg: null,
  maxRewardMinor: null,
});

describe('cumulative progress (core/rules/progress.ts)', () => {
  it('counts a purchase by its net amount (spend) or as one (Nth), and not at all below the minimum', () => {
    const spend = spendTerms().reward;
    const nth = nthTerms().reward;
    assert.equal(contributionOf(spend, 4_000, 0), 4_000);
    assert.equal(contributionOf(spend, 4_000, 5_000), 0);
    assert.equal(contributionOf(spend, 0, 0), 0);
    assert.equal(contributionOf(nth, 2_000, 2_000), 1);
    assert.equal(contributionOf(nth, 1_999, 2_000), 0);
  });

  it("earns each completion the purchase reaches, numbered from the group's last", () => {
    const first = progressOnSettlement(spendTerms(), 6_000, undefined);
    assert.deepEqual(first.after, { measure: 6_000, rewarded: 0 });
    assert.deepEqual(first.completions, []);
    const second = progressOnSettlement(spendTerms(), 25_000, first.after);
    assert.deepEqual(second.after, { measure: 31_000, rewarded: 3 });
    assert.deepEqual(
      second.completions.map((c) => [c.completion, c.amountMinor, c.balanceType]),
      [
        [1, 1_000, 'cashback'],
        [2, 1_000, 'cashback'],
        [3, 1_000, 'cashback'],
      ],
    );
  });

  it('stops at one completion when not repeatable, and at maxRedemptionsPerChg when repeatable', () => {
    const once = progressOnSettlement(spendTerms({}, false), 50_000, undefined);
    assert.equal(once.completions.length, 1);
    const capped = progressOnSettlement(spendTerms({ maxRedemptionsPerChg: 2 }), 50_000, undefined);
    assert.deepEqual(capped.after, { measure: 50_000, rewarded: 2 });
    const past = progressOnSettlement(spendTerms({ maxRedemptionsPerChg: 2 }), 10_000, capped.after);
    assert.deepEqual(past.completions, []);
    assert.equal(past.after.measure, 60_000);
  });

  it('pays completions in order as far as the budget reaches, each counted all the same', () => {
    const step = progressOnSettlement({ ...spendTerms(), budgetRemainingMinor: 2_500 }, 40_000, undefined);
    assert.deepEqual(
      step.completions.map((c) => [c.completion, c.amountMinor]),
      [
        [1, 1_000],
        [2, 1_000],
        [3, 500],
        [4, 0],
      ],
    );
    assert.deepEqual([step.after.rewarded, step.cappedByBudget], [4, true]);
    const roomy = progressOnSettlement({ ...spendTerms(), budgetRemainingMinor: 4_000 }, 40_000, undefined);
    assert.deepEqual(
      [roomy.completions.map((c) => c.amountMinor), roomy.cappedByBudget],
      [[1_000, 1_000, 1_000, 1_000], false],
    );
  });

  it("pays an Nth purchase's rate on its own amount, under the per-transaction cap", () => {
    const terms = { ...nthTerms({ rewardMinor: undefined, rateBps: 1_000 }), maxRewardMinor: 700 };
    let stored: StoredProgress | undefined;
    const amounts = [3_000, 2_500, 9_000];
    const steps = amounts.map((a) => {
      const step = progressOnSettlement(terms, a, stored);
      stored = step.after;
      return step;
    });
    assert.deepEqual(
      steps.map((s) => s.completions.map((c) => c.amountMinor)),
      [[], [], [700]],
    );
  });

  it('a refund lowers the measure by what the purchase no longer adds, and takes back the latest completions', () => {
    const stored = { measure: 31_000, rewarded: 3 };
    const partial = progressOnRefund(spendTerms(), { contributed: 25_000, netAmountMinor: 20_000, stored });
    assert.deepEqual(partial.after, { measure: 26_000, rewarded: 2 });
    assert.deepEqual(
      partial.completions.map((c) => c.completion),
      [3],
    );
    assert.equal(partial.contributedAfter, 20_000);
    const below = progressOnRefund(spendTerms({ minSpendMinor: 5_000 }), {
      contributed: 20_000,
      netAmountMinor: 4_000,
      stored: partial.after,
    });
    assert.deepEqual(below.after, { measure: 6_000, rewarded: 0 });
    assert.deepEqual(
      below.completions.map((c) => c.completion),
      [2, 1],
    );
    assert.equal(below.contributedAfter, 0);
  });

  it('never adds back on a refund, and refuses a measure smaller than what it takes', () => {
    const same = progressOnRefund(spendTerms(), {
      contributed: 0,
      netAmountMinor: 9_000,
      stored: { measure: 0, rewarded: 0 },
    });
    assert.equal(same.contributedAfter, 0);
    assert.throws(
      () =>
        progressOnRefund(spendTerms(), {
          contributed: 5_000,
          netAmountMinor: 0,
          stored: { measure: 100, rewarded: 0 },
        }),
      RangeError,
    );
  });

  it('sums what completions earned by balance type', () => {
    const cash = progressOnSettlement(spendTerms(), 20_000, undefined);
    const branded = progressOnSettlement(nthTerms(), 2_000, { measure: 2, rewarded: 0 });
    assert.deepEqual(completedOf([cash, branded]), { cashbackMinor: 2_000, brandedMinor: 500 });
  });

  it("reads the progress a claim's review recorded, and none from evidence without it", () => {
    const step = progressOnSettlement(spendTerms(), 20_000, undefined);
    assert.deepEqual(reviewedProgress({ matchTrace: null, progress: [step] }), [step]);
    for (const evidence of [null, {}, { progress: null }, { progress: 'no' }])
      assert.deepEqual(reviewedProgress(evidence), []);
  });

  it('keeps rewarded completions equal to min(maxRedemptions, completions(measure)) through any purchases and refunds', () => {
    const purchase = fc.record({
      amount: fc.integer({ min: 1, max: 30_000 }),
      refunds: fc.array(fc.integer({ min: 1, max: 30_000 }), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: null }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.array(purchase, { minLength: 1, maxLength: 12 }),
        (repeatable, max, minSpend, purchases) => {
          const terms = spendTerms({ maxRedemptionsPerChg: max, minSpendMinor: minSpend }, repeatable);
          let stored: StoredProgress = { measure: 0, rewarded: 0 };
          let posted = 0;
          const settled = purchases.map((p) => {
            const step = progressOnSettlement(terms, p.amount, stored);
            stored = step.after;
            posted += step.completions.length;
            return { amount: p.amount, refunds: p.refunds, contributed: step.contribution, refunded: 0 };
          });
          // Refunds in an order of their own: the last purchase's first.
          for (const s of [...settled].reverse())
            for (const r of s.refunds) {
              s.refunded = Math.min(s.amount, s.refunded + r);
              const step = progressOnRefund(terms, {
                contributed: s.contributed,
                netAmountMinor: s.amount - s.refunded,
                stored,
              });
              stored = step.after;
              s.contributed = step.contributedAfter;
              posted -= step.completions.length;
            }
          const measure = settled.reduce((sum, s) => sum + s.contributed, 0);
          assert.equal(stored.measure, measure);
          assert.equal(stored.rewarded, rewardedCompletions(terms.reward, measure, max));
          assert.equal(posted, stored.rewarded);
        },
      ),
      { numRuns: 500 },
    );
  });
});
