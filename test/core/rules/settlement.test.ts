import assert from 'node:assert/strict';
import {
  claimCreditClawedBack,
  claimCreditsDue,
  clawbackDue,
  decideSettlement,
  netOfRefunds,
} from '../../../core/rules/settlement';
import type { EarnDecision, EarnOffer } from '../../../core/rules/eligibility';

const offer = (id: string, overrides: Partial<EarnOffer> = {}): EarnOffer => ({
  id,
  startsAt: new Date('2026-01-01T00:00:00Z'),
  endsAt: null,
  catalogueStatus: 'active',
  minSpendMinor: 0,
  mccs: null,
  cashbackRateBps: 500,
  brandedRateBps: 0,
  maxRewardMinor: null,
  maxRewardPerChgMinor: null,
  ...overrides,
});
const earn = (eligibleOfferIds: string[]): EarnDecision => ({
  eligible: eligibleOfferIds.length > 0,
  at: new Date(),
  reasons: [],
  eligibleOfferIds,
  cumulativeOfferIds: [],
  offers: [],
});
const spend = (eligible: boolean, availableBalanceMinor: number) => ({
  eligible,
  availableBalanceMinor,
  pendingBalanceMinor: 0,
  spendRestrictionReasons: [],
});

describe('core/rules/settlement', () => {
  describe('decideSettlement', () => {
    it('earns on the whole amount when nothing is spent', () => {
      const d = decideSettlement({
        amountMinor: 2599,
        earn: earn(['a']),
        spend: null,
        offers: [offer('a')],
        earnedSoFarByOffer: {},
      });
      assert.deepEqual([d.spentMinor, d.eligibleAmountMinor, d.cashbackMinor, d.winningOfferId], [0, 2599, 129, 'a']);
    });

    it('spends available balance first and earns on the rest', () => {
      const d = decideSettlement({
        amountMinor: 10_000,
        earn: earn(['a']),
        spend: spend(true, 3000),
        offers: [offer('a')],
        earnedSoFarByOffer: {},
      });
      assert.deepEqual([d.spentMinor, d.eligibleAmountMinor, d.cashbackMinor], [3000, 7000, 350]);
    });

    it('pays a tiered offer at the tier of the whole purchase, on the amount left after branded spend', () => {
      const tiers = [
        { minSpendMinor: 1_000, cashbackRateBps: 100, brandedRateBps: 0 },
        { minSpendMinor: 10_000, cashbackRateBps: 500, brandedRateBps: 0 },
      ];
      const d = decideSettlement({
        amountMinor: 10_000,
        earn: earn(['t', 'a']),
        spend: spend(true, 3000),
        offers: [offer('t', { cashbackRateBps: 500, tiers }), offer('a', { cashbackRateBps: 400 })],
        earnedSoFarByOffer: {},
      });
      // 7,000 left to earn on: the 10,000 tier's 5 % beats the flat 4 %.
      assert.deepEqual([d.eligibleAmountMinor, d.cashbackMinor, d.winningOfferId], [7000, 350, 't']);
      const lower = decideSettlement({
        amountMinor: 9_999,
        earn: earn(['t', 'a']),
        spend: null,
        offers: [offer('t', { cashbackRateBps: 500, tiers }), offer('a', { cashbackRateBps: 400 })],
        earnedSoFarByOffer: {},
      });
      assert.deepEqual([lower.cashbackMinor, lower.winningOfferId], [399, 'a']);
    });

    it("applies the merchant's priority over value, and lists every qualifying offer with why", () => {
      const input = {
        amountMinor: 10_000,
        earn: earn(['a', 'b']),
        spend: null,
        offers: [offer('a', { cashbackRateBps: 1000 }), offer('b', { cashbackRateBps: 300, priority: 2 })],
        earnedSoFarByOffer: {},
      };
      const byPriority = decideSettlement({ ...input, stacking: { policy: 'priority' } });
      assert.deepEqual([byPriority.winningOfferId, byPriority.cashbackMinor], ['b', 300]);
      assert.deepEqual(byPriority.stacking, [
        { offerId: 'b', appliedMinor: 300, reason: 'applied' },
        { offerId: 'a', appliedMinor: 0, reason: 'lower_priority' },
      ]);
      const bestOf = decideSettlement(input);
      assert.deepEqual(
        [bestOf.winningOfferId, bestOf.stacking.map((o) => o.reason)],
        ['a', ['applied', 'lower_value']],
      );
    });

    it('stacks every qualifying offer under the cap, the one cut short trimmed branded first', () => {
      const input = {
        amountMinor: 10_000,
        earn: earn(['a', 'b', 'c']),
        spend: null,
        offers: [
          offer('a', { cashbackRateBps: 300, priority: 2 }),
          offer('b', { cashbackRateBps: 200, brandedRateBps: 200, priority: 1 }),
          offer('c', { cashbackRateBps: 100 }),
        ],
        earnedSoFarByOffer: {},
      };
      // 6 % of 10,000 = 600: a gives 300, b's 400 is cut to 300 (branded trimmed first: 200 cashback,
      // 100 branded), c gets nothing.
      const d = decideSettlement({ ...input, stacking: { policy: 'stack', stackCapBps: 600 } });
      assert.deepEqual(
        d.applied.map((a) => [a.offerId, a.reward.cashbackMinor, a.reward.brandedMinor, a.reward.cappedBy]),
        [
          ['a', 300, 0, null],
          ['b', 200, 100, 'stack'],
        ],
      );
      assert.deepEqual([d.winningOfferId, d.cashbackMinor, d.brandedMinor], ['a', 500, 100]);
      assert.deepEqual(
        d.stacking.map((o) => [o.offerId, o.appliedMinor, o.reason]),
        [
          ['a', 300, 'applied'],
          ['b', 300, 'stack_cap'],
          ['c', 0, 'stack_cap'],
        ],
      );
      const roomy = decideSettlement({ ...input, stacking: { policy: 'stack', stackCapBps: 10_000 } });
      assert.deepEqual([roomy.cashbackMinor, roomy.brandedMinor, roomy.applied.length], [600, 200, 3]);
      const none = decideSettlement({ ...input, stacking: { policy: 'stack', stackCapBps: 0 } });
      assert.deepEqual([none.winningOfferId, none.applied, none.cashbackMinor], [null, [], 0]);
    });

    it('spends at most the purchase amount, leaving nothing to earn on', () => {
      const d = decideSettlement({
        amountMinor: 500,
        earn: earn(['a']),
        spend: spend(true, 3000),
        offers: [offer('a')],
        earnedSoFarByOffer: {},
      });
      assert.deepEqual([d.spentMinor, d.eligibleAmountMinor, d.cashbackMinor, d.winningOfferId], [500, 0, 0, null]);
    });

    it('spends nothing when spend is not eligible', () => {
      const d = decideSettlement({
        amountMinor: 500,
        earn: earn([]),
        spend: spend(false, 3000),
        offers: [offer('a')],
        earnedSoFarByOffer: {},
      });
      assert.deepEqual([d.spentMinor, d.cashbackMinor, d.winningOfferId], [0, 0, null]);
    });

    it('picks the offer giving the most reward, the earliest on a tie, with caps applied', () => {
      const offers = [
        offer('a', { cashbackRateBps: 300 }),
        offer('b', { cashbackRateBps: 1000, maxRewardMinor: 200 }),
        offer('c', { cashbackRateBps: 250, brandedRateBps: 250 }),
      ];
      const d = decideSettlement({
        amountMinor: 10_000,
        earn: earn(['a', 'b', 'c']),
        spend: null,
        offers,
        earnedSoFarByOffer: {},
      });
      assert.equal(d.winningOfferId, 'c');
      assert.deepEqual([d.cashbackMinor, d.brandedMinor], [250, 250]);
      const capped = decideSettlement({
        amountMinor: 10_000,
        earn: earn(['b']),
        spend: null,
        offers,
        earnedSoFarByOffer: {},
      });
      assert.equal(capped.reward?.cappedBy, 'transaction');
      const tie = decideSettlement({
        amountMinor: 10_000,
        earn: earn(['a', 'c']),
        spend: null,
        offers: [offer('a', { cashbackRateBps: 500 }), offer('c', { cashbackRateBps: 500 })],
        earnedSoFarByOffer: {},
      });
      assert.equal(tie.winningOfferId, 'a');
    });

    it('ignores offers the earn decision did not find eligible', () => {
      const d = decideSettlement({
        amountMinor: 10_000,
        earn: earn(['a']),
        spend: null,
        offers: [offer('a', { cashbackRateBps: 100 }), offer('b', { cashbackRateBps: 900 })],
        earnedSoFarByOffer: {},
      });
      assert.equal(d.winningOfferId, 'a');
    });
  });

  describe('clawbackDue', () => {
    it('claws back in proportion, rounding down, and everything on a full refund', () => {
      assert.equal(
        clawbackDue({
          earnedMinor: 125,
          purchaseAmountMinor: 2500,
          refundedBeforeMinor: 0,
          refundMinor: 1000,
          clawedBackBeforeMinor: 0,
        }),
        50,
      );
      assert.equal(
        clawbackDue({
          earnedMinor: 125,
          purchaseAmountMinor: 2500,
          refundedBeforeMinor: 1000,
          refundMinor: 1500,
          clawedBackBeforeMinor: 50,
        }),
        75,
      );
      assert.equal(
        clawbackDue({
          earnedMinor: 101,
          purchaseAmountMinor: 3,
          refundedBeforeMinor: 0,
          refundMinor: 1,
          clawedBackBeforeMinor: 0,
        }),
        33,
      );
      assert.equal(
        clawbackDue({
          earnedMinor: 101,
          purchaseAmountMinor: 3,
          refundedBeforeMinor: 1,
          refundMinor: 2,
          clawedBackBeforeMinor: 33,
        }),
        68,
      );
    });

    it('never takes more than was earned, even when refunds exceed the purchase', () => {
      assert.equal(
        clawbackDue({
          earnedMinor: 100,
          purchaseAmountMinor: 1000,
          refundedBeforeMinor: 0,
          refundMinor: 5000,
          clawedBackBeforeMinor: 0,
        }),
        100,
      );
      assert.equal(
        clawbackDue({
          earnedMinor: 100,
          purchaseAmountMinor: 1000,
          refundedBeforeMinor: 1000,
          refundMinor: 10,
          clawedBackBeforeMinor: 100,
        }),
        0,
      );
      assert.equal(
        clawbackDue({
          earnedMinor: 0,
          purchaseAmountMinor: 1000,
          refundedBeforeMinor: 0,
          refundMinor: 1000,
          clawedBackBeforeMinor: 0,
        }),
        0,
      );
    });

    it('sums over any split of refunds to what one full refund claws back', () => {
      for (let seed = 1; seed <= 50; seed++) {
        const purchase = 1 + ((seed * 7919) % 100_000);
        const earned = (seed * 104729) % 5000;
        let refunded = 0;
        let clawed = 0;
        for (let i = 0; refunded < purchase && i < 20; i++) {
          const refund = Math.min(
            purchase - refunded,
            1 + ((seed * (i + 3) * 131) % Math.max(1, Math.floor(purchase / 3))),
          );
          clawed += clawbackDue({
            earnedMinor: earned,
            purchaseAmountMinor: purchase,
            refundedBeforeMinor: refunded,
            refundMinor: refund,
            clawedBackBeforeMinor: clawed,
          });
          refunded += refund;
        }
        if (refunded < purchase)
          clawed += clawbackDue({
            earnedMinor: earned,
            purchaseAmountMinor: purchase,
            refundedBeforeMinor: refunded,
            refundMinor: purchase - refunded,
            clawedBackBeforeMinor: clawed,
          });
        assert.equal(clawed, earned, `seed ${seed}`);
      }
    });
  });
});

describe('claim credits on a refunded purchase', () => {
  const purchase = 10_000;

  it('reads a credit posted before any refund exactly as the settlement earn', () => {
    for (const refundedMinor of [0, 1, 3333, 9999, 10_000, 12_000])
      assert.equal(
        claimCreditClawedBack(
          { amountMinor: 487, purchaseRefundedMinor: 0 },
          { purchaseAmountMinor: purchase, refundedMinor },
        ),
        clawbackDue({
          earnedMinor: 487,
          purchaseAmountMinor: purchase,
          refundedBeforeMinor: 0,
          refundMinor: refundedMinor,
          clawedBackBeforeMinor: 0,
        }),
      );
  });

  it('takes a credit posted after a partial refund in proportion to what was left, all of it at the full refund', () => {
    const credit = { amountMinor: 300, purchaseRefundedMinor: 4000 };
    const at = (refundedMinor: number) =>
      claimCreditClawedBack(credit, { purchaseAmountMinor: purchase, refundedMinor });
    assert.equal(at(4000), 0, 'the refunds before it take nothing of it');
    assert.equal(at(7000), 150, 'half of what was left');
    assert.equal(at(10_000), 300);
    assert.equal(at(11_000), 300, 'never more than the credit');
  });

  it('adds up, refund after refund, to the whole credit whatever the steps', () => {
    const credits = [
      { amountMinor: 333, purchaseRefundedMinor: 0 },
      { amountMinor: 101, purchaseRefundedMinor: 2500 },
    ];
    for (const steps of [[2500, 2500, 2500, 2500], [1, 9998, 1], [10_000], [7, 13, 9980]]) {
      let refundedBeforeMinor = 0;
      let taken = 0;
      for (const refundMinor of steps) {
        const due = claimCreditsDue(credits, { purchaseAmountMinor: purchase, refundedBeforeMinor, refundMinor });
        assert.ok(due >= 0);
        taken += due;
        refundedBeforeMinor += refundMinor;
      }
      assert.equal(
        taken,
        333 + claimCreditClawedBack(credits[1], { purchaseAmountMinor: purchase, refundedMinor: 10_000 }),
      );
      assert.equal(taken, 434);
    }
  });

  it('nets a reward of the refunds so far with the floor a settlement clawback uses', () => {
    assert.equal(netOfRefunds(125, { purchaseAmountMinor: 2500, refundedMinor: 1000 }), 75);
    assert.equal(netOfRefunds(125, { purchaseAmountMinor: 2500, refundedMinor: 2500 }), 0);
    assert.equal(netOfRefunds(125, { purchaseAmountMinor: 2500, refundedMinor: 0 }), 125);
    assert.equal(netOfRefunds(7, { purchaseAmountMinor: 3, refundedMinor: 1 }), 7 - 2);
  });
});
