import assert from 'node:assert/strict';
import { budgetState } from '../../../core/rules/budget';
import {
  AUTOMATIC_REJECTIONS,
  decideClaim,
  merchantInQuestion,
  type ClaimDecision,
  type ClaimFacts,
  type ClaimedTransaction,
} from '../../../core/rules/claims';
import {
  EARN_REASONS,
  evaluateEarn,
  type EarnDecision,
  type EarnInput,
  type EarnOffer,
} from '../../../core/rules/eligibility';

// The purchase happened at `now`; the rules are evaluated at that instant, as the claim
// activity does (evaluateEarn with the purchase as the transaction).
const now = new Date('2026-03-01T12:00:00Z');
const days = (n: number) => new Date(now.getTime() + n * 86_400_000);
const offer = (id: string, over: Partial<EarnOffer> = {}): EarnOffer => ({
  id,
  startsAt: days(-10),
  endsAt: null,
  catalogueStatus: 'active',
  minSpendMinor: 0,
  mccs: null,
  cashbackRateBps: 500,
  brandedRateBps: 0,
  maxRewardMinor: null,
  maxRewardPerChgMinor: null,
  ...over,
});
const tx = (amountMinor: number, over: Partial<{ mcc: string; currency: string; at: Date }> = {}) => ({
  amountMinor,
  mcc: '5812',
  currency: 'usd',
  at: now,
  ...over,
});
/** The rules of a merchant for a 2500 usd purchase at `now` (override anything). */
const rules = (over: Partial<EarnInput> = {}): EarnDecision =>
  evaluateEarn({
    merchant: { id: 'mp_1', status: 'active' },
    offers: [offer('ofr_a')],
    activation: { status: 'active', activatedAt: days(-1) },
    groupStatus: 'active',
    transaction: tx(2500),
    now,
    ...over,
  });
/** The match trace's earn decision, as the transaction workflow records it. */
const recorded = (d: EarnDecision) => ({ eligible: d.eligible, reasons: d.reasons });

/** A settled, processed usd purchase matched to mp_1 that was eligible and kept nothing. */
const txn = (over: Partial<ClaimedTransaction> = {}): ClaimedTransaction => ({
  kind: 'settled',
  rewardStatus: 'matched',
  currency: 'usd',
  isRefund: false,
  matchedMerchantId: 'mp_1',
  recordedEarn: recorded(rules()),
  amountMinor: 2500,
  refundedMinor: 0,
  refundsReceivedMinor: 0,
  keptCashbackMinor: 0,
  keptBrandedMinor: 0,
  ...over,
});
const facts = (over: Partial<ClaimFacts> = {}): ClaimFacts => ({
  reason: 'missing_reward',
  claimedMerchantId: null,
  transaction: txn(),
  evaluation: rules(),
  ...over,
});
const rejected = (d: ClaimDecision) => (d.outcome === 'rejected' ? d.reasonCode : `not rejected: ${d.outcome}`);
const review = (d: ClaimDecision) => {
  assert.equal(d.outcome, 'needs_review', `expected needs_review, got ${JSON.stringify(d)}`);
  return d as Extract<ClaimDecision, { outcome: 'needs_review' }>;
};
const assertMinorUnits = (d: Extract<ClaimDecision, { outcome: 'needs_review' }>) => {
  for (const v of [d.computed.cashbackMinor, d.computed.brandedMinor, d.missing.cashbackMinor, d.missing.brandedMinor])
    assert.ok(Number.isSafeInteger(v) && v >= 0, `${v} is not a non-negative integer of minor units`);
};

describe('merchantInQuestion', () => {
  it('is the claimed merchant when the cardholder names one, even if the trace matched another', () => {
    assert.equal(merchantInQuestion({ claimedMerchantId: 'mp_2', transaction: txn() }), 'mp_2');
    assert.equal(merchantInQuestion({ claimedMerchantId: 'mp_2', transaction: null }), 'mp_2');
  });

  it('is the matched merchant when the claim names none', () => {
    assert.equal(merchantInQuestion({ claimedMerchantId: null, transaction: txn() }), 'mp_1');
  });

  it('is null without a claimed merchant and without a match (or without a transaction)', () => {
    assert.equal(merchantInQuestion({ claimedMerchantId: null, transaction: txn({ matchedMerchantId: null }) }), null);
    assert.equal(merchantInQuestion({ claimedMerchantId: null, transaction: null }), null);
  });
});

describe('decideClaim', () => {
  describe('rejections before the rules', () => {
    it('rejects transaction_not_received when the purchase was never received', () => {
      const d = decideClaim(facts({ transaction: null, evaluation: null, claimedMerchantId: 'mp_1' }));
      assert.equal(rejected(d), 'transaction_not_received');
      assert.ok(d.detail.length > 0);
    });

    it('rejects reward_pending for an authorization', () => {
      const d = decideClaim(facts({ transaction: txn({ kind: 'auth', rewardStatus: 'matched' }) }));
      assert.equal(rejected(d), 'reward_pending');
      assert.match(d.detail, /auth/);
    });

    it('rejects reward_pending for a settlement whose reward status is still pending', () => {
      const d = decideClaim(facts({ transaction: txn({ rewardStatus: 'pending' }) }));
      assert.equal(rejected(d), 'reward_pending');
      assert.match(d.detail, /pending/);
    });

    it('rejects reward_pending for a settlement whose reward status is unknown', () => {
      assert.equal(rejected(decideClaim(facts({ transaction: txn({ rewardStatus: 'unknown' }) }))), 'reward_pending');
    });

    it('rejects not_a_purchase for a refund', () => {
      assert.equal(rejected(decideClaim(facts({ transaction: txn({ isRefund: true }) }))), 'not_a_purchase');
    });

    it('rejects currency_not_supported for a non-usd purchase', () => {
      const evaluation = rules({ transaction: tx(2500, { currency: 'eur' }) });
      const d = decideClaim(
        facts({ transaction: txn({ currency: 'eur', recordedEarn: recorded(evaluation) }), evaluation }),
      );
      assert.equal(rejected(d), 'currency_not_supported');
      assert.match(d.detail, /eur/);
    });

    it('rejects merchant_not_identified without a matched merchant and without a claimed merchant', () => {
      const d = decideClaim(
        facts({
          claimedMerchantId: null,
          transaction: txn({ rewardStatus: 'not_matched', matchedMerchantId: null, recordedEarn: null }),
          evaluation: null,
        }),
      );
      assert.equal(rejected(d), 'merchant_not_identified');
    });
  });

  describe('ineligible purchases: the recorded match trace proves the reason', () => {
    const cases: Array<[string, Partial<EarnInput>]> = [
      ['merchant_not_activated', { activation: null }],
      ['no_active_offer', { offers: [offer('ofr_a', { endsAt: days(-1) })] }],
      ['chg_inactive', { groupStatus: 'inactive' }],
      ['merchant_inactive', { merchant: { id: 'mp_1', status: 'inactive' } }],
      ['below_min_spend', { offers: [offer('ofr_a', { minSpendMinor: 5000 })] }],
      ['mcc_excluded', { offers: [offer('ofr_a', { mccs: ['5411'] })] }],
      [
        'offer_cap_reached',
        { offers: [offer('ofr_a', { maxRewardPerChgMinor: 1000 })], earnedSoFarByOffer: { ofr_a: 1000 } },
      ],
      [
        'redemption_limit_reached',
        { offers: [offer('ofr_a', { maxRedemptionsPerChg: 2 })], redeemedSoFarByOffer: { ofr_a: 2 } },
      ],
      ['offer_budget_exhausted', { offers: [offer('ofr_a', { budget: budgetState(5000, 5000, 'month', days(0)) })] }],
      [
        'not_in_audience',
        { offers: [offer('ofr_a', { enrolment: { inAudience: false, arm: null, detail: 'no segment' } })] },
      ],
      ['holdout', { offers: [offer('ofr_a', { enrolment: { inAudience: true, arm: 'control', detail: 'in' } })] }],
    ];
    for (const [reason, over] of cases) {
      it(`rejects ${reason} at the matched merchant`, () => {
        const trace = rules(over);
        assert.deepEqual([trace.eligible, trace.reasons], [false, [reason]]);
        const d = decideClaim(facts({ transaction: txn({ recordedEarn: recorded(trace) }), evaluation: trace }));
        assert.equal(rejected(d), reason);
        assert.match(d.detail, /mp_1/);
      });
    }

    it('covers every earn reason, each an automatic rejection', () => {
      assert.deepEqual(cases.map(([r]) => r).sort(), [...EARN_REASONS].sort());
      for (const r of EARN_REASONS) assert.ok((AUTOMATIC_REJECTIONS as readonly string[]).includes(r));
    });

    it('rejects with the first recorded reason and names all of them', () => {
      const trace = rules({
        activation: null,
        groupStatus: 'inactive',
        offers: [offer('ofr_a', { minSpendMinor: 5000 })],
      });
      assert.deepEqual(trace.reasons, ['merchant_not_activated', 'chg_inactive', 'below_min_spend']);
      const d = decideClaim(facts({ transaction: txn({ recordedEarn: recorded(trace) }), evaluation: trace }));
      assert.equal(rejected(d), 'merchant_not_activated');
      assert.match(d.detail, /merchant_not_activated, chg_inactive, below_min_spend/);
    });

    it('trusts the recorded trace at the matched merchant over a later evaluation that would pass', () => {
      const trace = rules({ activation: null });
      const d = decideClaim(facts({ transaction: txn({ recordedEarn: recorded(trace) }), evaluation: rules() }));
      assert.equal(rejected(d), 'merchant_not_activated');
    });

    it('also uses the recorded trace when the claim names the matched merchant itself', () => {
      const trace = rules({ offers: [offer('ofr_a', { minSpendMinor: 5000 })] });
      const d = decideClaim(
        facts({ claimedMerchantId: 'mp_1', transaction: txn({ recordedEarn: recorded(trace) }), evaluation: trace }),
      );
      assert.equal(rejected(d), 'below_min_spend');
    });
  });

  describe('a claimed merchant the matcher missed: the rules decide', () => {
    const unmatched = txn({ rewardStatus: 'not_matched', matchedMerchantId: null, recordedEarn: null });

    it('rejects merchant_not_activated when the claimed merchant was activated after the purchase', () => {
      const evaluation = rules({
        merchant: { id: 'mp_2', status: 'active' },
        activation: { status: 'active', activatedAt: days(1) },
      });
      assert.deepEqual(evaluation.reasons, ['merchant_not_activated']);
      const d = decideClaim(facts({ claimedMerchantId: 'mp_2', transaction: unmatched, evaluation }));
      assert.equal(rejected(d), 'merchant_not_activated');
      assert.match(d.detail, /mp_2/);
    });

    it('rejects with the first reason the rules give for the claimed merchant', () => {
      const evaluation = rules({
        merchant: { id: 'mp_2', status: 'inactive' },
        offers: [offer('ofr_b', { mccs: ['5411'] })],
      });
      assert.deepEqual(evaluation.reasons, ['merchant_inactive', 'mcc_excluded']);
      const d = decideClaim(facts({ claimedMerchantId: 'mp_2', transaction: unmatched, evaluation }));
      assert.equal(rejected(d), 'merchant_inactive');
    });

    it('sends an eligible claimed merchant to review as merchant_not_recognised: computed = the winner split, missing = computed', () => {
      const evaluation = rules({
        merchant: { id: 'mp_2', status: 'active' },
        offers: [
          offer('ofr_low', { cashbackRateBps: 300 }),
          offer('ofr_win', { cashbackRateBps: 400, brandedRateBps: 200 }),
        ],
      });
      assert.equal(evaluation.winningOfferId, 'ofr_win');
      const d = review(decideClaim(facts({ claimedMerchantId: 'mp_2', transaction: unmatched, evaluation })));
      assert.equal(d.reasonCode, 'merchant_not_recognised');
      // 2500 x 400 / 10000 = 100 cashback, 2500 x 200 / 10000 = 50 branded.
      assert.deepEqual(d.computed, { offerId: 'ofr_win', cashbackMinor: 100, brandedMinor: 50 });
      assert.deepEqual(d.missing, { cashbackMinor: 100, brandedMinor: 50 });
      assert.equal(d.computed.cashbackMinor + d.computed.brandedMinor, evaluation.estimatedRewardMinor);
      assert.match(d.detail, /mp_2/);
      assertMinorUnits(d);
    });
  });

  describe('a claimed merchant other than the matched one', () => {
    it('does not count the reward posted at the matched merchant', () => {
      const evaluation = rules({ merchant: { id: 'mp_2', status: 'active' }, offers: [offer('ofr_b')] });
      const d = review(
        decideClaim(
          facts({
            claimedMerchantId: 'mp_2',
            transaction: txn({ keptCashbackMinor: 125, keptBrandedMinor: 10 }),
            evaluation,
          }),
        ),
      );
      assert.equal(d.reasonCode, 'merchant_not_recognised');
      assert.deepEqual(d.computed, { offerId: 'ofr_b', cashbackMinor: 125, brandedMinor: 0 });
      assert.deepEqual(d.missing, { cashbackMinor: 125, brandedMinor: 0 });
    });

    it('ignores the matched merchant recorded ineligibility and evaluates the claimed merchant', () => {
      const matchedTrace = rules({ activation: null });
      const evaluation = rules({ merchant: { id: 'mp_2', status: 'active' }, offers: [offer('ofr_b')] });
      const d = review(
        decideClaim(
          facts({ claimedMerchantId: 'mp_2', transaction: txn({ recordedEarn: recorded(matchedTrace) }), evaluation }),
        ),
      );
      assert.equal(d.reasonCode, 'merchant_not_recognised');
    });
  });

  describe('the matched merchant: comparing what was posted with the rules', () => {
    it('rejects already_rewarded when the purchase kept exactly what the rules give', () => {
      const evaluation = rules({ offers: [offer('ofr_a', { cashbackRateBps: 500, brandedRateBps: 200 })] });
      const d = decideClaim(facts({ transaction: txn({ keptCashbackMinor: 125, keptBrandedMinor: 50 }), evaluation }));
      assert.equal(rejected(d), 'already_rewarded');
      assert.match(d.detail, /125/);
    });

    it('rejects already_rewarded when the claim names the matched merchant and it kept the full reward', () => {
      const d = decideClaim(facts({ claimedMerchantId: 'mp_1', transaction: txn({ keptCashbackMinor: 125 }) }));
      assert.equal(rejected(d), 'already_rewarded');
    });

    it('sends reward_below_rules to review with the per-type difference missing', () => {
      const evaluation = rules({ offers: [offer('ofr_a', { cashbackRateBps: 500, brandedRateBps: 200 })] });
      const d = review(
        decideClaim(
          facts({
            reason: 'wrong_amount',
            transaction: txn({ keptCashbackMinor: 100, keptBrandedMinor: 20 }),
            evaluation,
          }),
        ),
      );
      assert.equal(d.reasonCode, 'reward_below_rules');
      assert.deepEqual(d.computed, { offerId: 'ofr_a', cashbackMinor: 125, brandedMinor: 50 });
      assert.deepEqual(d.missing, { cashbackMinor: 25, brandedMinor: 30 });
      assertMinorUnits(d);
    });

    it('sends a matched purchase that kept nothing to review with the whole reward missing', () => {
      const d = review(decideClaim(facts()));
      assert.equal(d.reasonCode, 'reward_below_rules');
      assert.deepEqual(d.computed, { offerId: 'ofr_a', cashbackMinor: 125, brandedMinor: 0 });
      assert.deepEqual(d.missing, { cashbackMinor: 125, brandedMinor: 0 });
    });

    it('rejects already_rewarded when the reward was computed on the amount left after branded spend', () => {
      // $100 at 500 + 200 bps, $2 paid with branded balance: 9800 earns 490 + 196, not 500 + 200.
      const terms = [offer('ofr_a', { cashbackRateBps: 500, brandedRateBps: 200, minSpendMinor: 10_000 })];
      const evaluation = rules({ offers: terms, transaction: { ...tx(10_000), eligibleAmountMinor: 9_800 } });
      assert.equal(evaluation.eligible, true, 'the offer qualifies on the whole amount');
      const d = decideClaim(facts({ transaction: txn({ keptCashbackMinor: 490, keptBrandedMinor: 196 }), evaluation }));
      assert.equal(rejected(d), 'already_rewarded');
      assert.match(d.detail, /490 and 196/);
    });

    it('never reports a negative missing amount when one type was over-posted', () => {
      const evaluation = rules({ offers: [offer('ofr_a', { cashbackRateBps: 500, brandedRateBps: 200 })] });
      const d = review(
        decideClaim(facts({ transaction: txn({ keptCashbackMinor: 200, keptBrandedMinor: 10 }), evaluation })),
      );
      assert.equal(d.reasonCode, 'reward_below_rules');
      assert.deepEqual(d.missing, { cashbackMinor: 0, brandedMinor: 40 });
      assertMinorUnits(d);
    });
  });

  describe('a purchase with refunds: decided on what it keeps net of them', () => {
    it('rejects purchase_refunded for a purchase refunded in full, processed or not, naming the refunds', () => {
      for (const refundedMinor of [0, 2500]) {
        const d = decideClaim(facts({ transaction: txn({ refundedMinor, refundsReceivedMinor: 2500 }) }));
        assert.equal(rejected(d), 'purchase_refunded');
        assert.match(d.detail, /refunded in full/);
      }
    });

    it('computes the reward net of the refunds processed so far, as a settlement would have kept it', () => {
      // 5 % of 2500 is 125; 1000 refunded takes floor(125 x 1000 / 2500) = 50 of it.
      const d = review(decideClaim(facts({ transaction: txn({ refundedMinor: 1000, refundsReceivedMinor: 1000 }) })));
      assert.deepEqual(d.computed, { offerId: 'ofr_a', cashbackMinor: 75, brandedMinor: 0 });
      assert.deepEqual(d.missing, { cashbackMinor: 75, brandedMinor: 0 });
      assert.match(d.detail, /net of refunds of 1000/);
    });

    it('rejects already_rewarded when what the purchase kept after a partial refund is the rules net of it', () => {
      const d = decideClaim(
        facts({ transaction: txn({ refundedMinor: 1000, refundsReceivedMinor: 1000, keptCashbackMinor: 75 }) }),
      );
      assert.equal(rejected(d), 'already_rewarded');
      assert.match(d.detail, /kept 75 cashback and 0 branded net of refunds of 1000/);
    });
  });

  describe('money in integer minor units', () => {
    it('takes 2500 at 500 bps cashback as 125', () => {
      const d = review(decideClaim(facts({ evaluation: rules({ transaction: tx(2500) }) })));
      assert.equal(d.computed.cashbackMinor, 125);
    });

    it('floors each component of the offer rates', () => {
      // 2599 x 333 / 10000 = 86.5467 -> 86; 2599 x 125 / 10000 = 32.4875 -> 32.
      const evaluation = rules({
        offers: [offer('ofr_a', { cashbackRateBps: 333, brandedRateBps: 125 })],
        transaction: tx(2599),
      });
      const d = review(
        decideClaim(facts({ transaction: txn({ keptCashbackMinor: 80, keptBrandedMinor: 32 }), evaluation })),
      );
      assert.deepEqual(d.computed, { offerId: 'ofr_a', cashbackMinor: 86, brandedMinor: 32 });
      assert.deepEqual(d.missing, { cashbackMinor: 6, brandedMinor: 0 });
      assertMinorUnits(d);
    });

    it('computes the capped split of the winning offer (the branded part gives way first)', () => {
      // 10000 x 500 = 500 cashback + 10000 x 300 = 300 branded, capped at 600 per transaction.
      const evaluation = rules({
        offers: [offer('ofr_a', { cashbackRateBps: 500, brandedRateBps: 300, maxRewardMinor: 600 })],
        transaction: tx(10_000),
      });
      const d = review(decideClaim(facts({ evaluation })));
      assert.deepEqual(d.computed, { offerId: 'ofr_a', cashbackMinor: 500, brandedMinor: 100 });
      assertMinorUnits(d);
    });
  });

  describe('no reward to compute', () => {
    it('rejects no_active_offer when the merchant in question has no evaluation (hand-written: null)', () => {
      assert.equal(rejected(decideClaim(facts({ evaluation: null }))), 'no_active_offer');
    });

    it('rejects no_active_offer for an eligible preview without a transaction (no winning offer)', () => {
      const preview = rules({ transaction: undefined });
      assert.deepEqual([preview.eligible, preview.winningOfferId], [true, undefined]);
      assert.equal(rejected(decideClaim(facts({ evaluation: preview }))), 'no_active_offer');
    });
  });

  describe('cumulative offers', () => {
    // A merchant with one offer: every third qualifying purchase earns 300 cashback.
    const nth = offer('ofr_n', {
      cashbackRateBps: 0,
      cumulative: { kind: 'nth_purchase', purchases: 3, rewardMinor: 300, balanceType: 'cashback', repeatable: true },
    });
    const evaluation = rules({ offers: [nth] });
    const terms = {
      offerId: 'ofr_n',
      reward: nth.cumulative!,
      minSpendMinor: 0,
      maxRedemptionsPerChg: null,
      maxRewardMinor: null,
    };
    /** A purchase the matcher missed, claimed at mp_1 where the group has made `measure` purchases. */
    const missed = (measure: number, over: Partial<ClaimFacts> = {}) =>
      facts({
        claimedMerchantId: 'mp_1',
        transaction: txn({ matchedMerchantId: null, recordedEarn: null, rewardStatus: 'not_matched' }),
        evaluation,
        progress: [{ terms, stored: { measure, rewarded: Math.floor(measure / 3) }, counted: false }],
        ...over,
      });

    it('reviews a missed purchase that reaches a completion: its reward is missing, with the progress it adds', () => {
      assert.deepEqual(evaluation.cumulativeOfferIds, ['ofr_n']);
      const d = review(decideClaim(missed(2)));
      assert.equal(d.reasonCode, 'merchant_not_recognised');
      assert.deepEqual(d.computed, { offerId: 'ofr_n', cashbackMinor: 300, brandedMinor: 0 });
      assert.deepEqual(d.missing, { cashbackMinor: 300, brandedMinor: 0 });
      assert.equal(d.progress.length, 1);
      assert.deepEqual(
        [d.progress[0].before, d.progress[0].after],
        [
          { measure: 2, rewarded: 0 },
          { measure: 3, rewarded: 1 },
        ],
      );
      assert.match(d.detail, /it would add 1 to offer ofr_n \(2 to 3\), reaching 1 completion\(s\) worth 300/);
    });

    it('reviews a missed purchase that only moves progress: nothing to credit, a purchase to count', () => {
      const d = review(decideClaim(missed(0)));
      assert.deepEqual(d.missing, { cashbackMinor: 0, brandedMinor: 0 });
      assert.deepEqual(d.progress[0].after, { measure: 1, rewarded: 0 });
    });

    it('rejects already_rewarded a purchase that counts towards the offer already, naming it', () => {
      const d = decideClaim(
        facts({ progress: [{ terms, stored: { measure: 3, rewarded: 1 }, counted: true }], evaluation }),
      );
      assert.equal(rejected(d), 'already_rewarded');
      assert.match((d as { detail: string }).detail, /counts towards offer ofr_n already/);
    });

    it("pays what the offer's budget has left, as the settlement would", () => {
      const d = review(
        decideClaim(
          missed(2, {
            progress: [
              { terms: { ...terms, budgetRemainingMinor: 120 }, stored: { measure: 2, rewarded: 0 }, counted: false },
            ],
          }),
        ),
      );
      assert.deepEqual(d.missing, { cashbackMinor: 120, brandedMinor: 0 });
      assert.equal(d.progress[0].cappedByBudget, true);
    });

    it('counts the spend net of refunds processed: spend X get Y on what the purchase still is', () => {
      const spend = offer('ofr_s', {
        cashbackRateBps: 0,
        cumulative: {
          kind: 'spend_x_get_y',
          spendMinor: 5_000,
          rewardMinor: 500,
          balanceType: 'branded',
          repeatable: false,
        },
      });
      const d = review(
        decideClaim(
          missed(0, {
            transaction: txn({
              matchedMerchantId: null,
              recordedEarn: null,
              refundedMinor: 1_000,
              refundsReceivedMinor: 1_000,
            }),
            evaluation: rules({ offers: [spend] }),
            progress: [
              {
                terms: { ...terms, offerId: 'ofr_s', reward: spend.cumulative! },
                stored: { measure: 3_000, rewarded: 0 },
                counted: false,
              },
            ],
          }),
        ),
      );
      // 2500 less 1000 refunded adds 1500: 4500 of 5000, no completion yet.
      assert.deepEqual(d.progress[0].after, { measure: 4_500, rewarded: 0 });
      assert.deepEqual(d.missing, { cashbackMinor: 0, brandedMinor: 0 });
    });
  });
});
