import assert from 'node:assert/strict';
import { evaluateEarn, minimumOf, termsAt, type EarnInput, type EarnOffer } from '../../../core/rules/eligibility';
import { budgetState } from '../../../core/rules/budget';

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
const input = (over: Partial<EarnInput> = {}): EarnInput => ({
  merchant: { id: 'mp_1', status: 'active' },
  offers: [offer('ofr_a')],
  activation: { status: 'active', activatedAt: days(-1) },
  groupStatus: 'active',
  now,
  ...over,
});
const tx = (amountMinor: number, over: Partial<{ mcc: string; currency: string; at: Date }> = {}) => ({
  amountMinor,
  currency: 'usd',
  at: now,
  ...over,
});

describe('evaluateEarn', () => {
  it('is eligible with an active activation and an open offer (no transaction: no estimate)', () => {
    const d = evaluateEarn(input());
    assert.deepEqual(
      [d.eligible, d.reasons, d.eligibleOfferIds, d.estimatedRewardMinor],
      [true, [], ['ofr_a'], undefined],
    );
  });

  it('reports merchant_not_activated without activation, after deactivation, and when activated after the transaction', () => {
    assert.deepEqual(evaluateEarn(input({ activation: null })).reasons, ['merchant_not_activated']);
    assert.deepEqual(evaluateEarn(input({ activation: { status: 'inactive', activatedAt: days(-5) } })).reasons, [
      'merchant_not_activated',
    ]);
    const late = evaluateEarn(input({ activation: { status: 'active', activatedAt: days(1) }, transaction: tx(1000) }));
    assert.deepEqual(late.reasons, ['merchant_not_activated']);
  });

  it('reports no_active_offer for no offers, scheduled, ended and deactivated offers', () => {
    assert.deepEqual(evaluateEarn(input({ offers: [] })).reasons, ['no_active_offer']);
    const offers = [
      offer('ofr_s', { startsAt: days(1) }),
      offer('ofr_e', { endsAt: days(-1) }),
      offer('ofr_i', { catalogueStatus: 'inactive' }),
    ];
    assert.deepEqual(evaluateEarn(input({ offers })).reasons, ['no_active_offer']);
  });

  it('reports chg_inactive for an inactive group, cardholder or card', () => {
    assert.deepEqual(evaluateEarn(input({ groupStatus: 'inactive' })).reasons, ['chg_inactive']);
    assert.deepEqual(evaluateEarn(input({ cardholderStatus: 'inactive' })).reasons, ['chg_inactive']);
    assert.deepEqual(evaluateEarn(input({ cardStatus: 'inactive' })).reasons, ['chg_inactive']);
  });

  it('reports merchant_inactive', () => {
    assert.deepEqual(evaluateEarn(input({ merchant: { id: 'mp_1', status: 'inactive' } })).reasons, [
      'merchant_inactive',
    ]);
  });

  it('reports below_min_spend, mcc_excluded and offer_cap_reached', () => {
    assert.deepEqual(
      evaluateEarn(input({ offers: [offer('ofr_a', { minSpendMinor: 2000 })], transaction: tx(1999) })).reasons,
      ['below_min_spend'],
    );
    assert.deepEqual(
      evaluateEarn(input({ offers: [offer('ofr_a', { mccs: ['5812'] })], transaction: tx(1000, { mcc: '5411' }) }))
        .reasons,
      ['mcc_excluded'],
    );
    const capped = evaluateEarn(
      input({ offers: [offer('ofr_a', { maxRewardPerChgMinor: 500 })], earnedSoFarByOffer: { ofr_a: 500 } }),
    );
    assert.deepEqual(capped.reasons, ['offer_cap_reached']);
  });

  it('caps the reward by what is left of the budget, then reports offer_budget_exhausted', () => {
    const budgeted = (used: number) =>
      offer('ofr_a', { cashbackRateBps: 1000, budget: budgetState(1000, used, 'month', now) });
    const edge = evaluateEarn(input({ offers: [budgeted(950)], transaction: tx(10_000) }));
    assert.deepEqual(
      [edge.eligible, edge.estimatedRewardMinor],
      [true, 50],
      'the purchase at the edge gets what is left',
    );
    assert.equal(edge.offers[0].reward!.cappedBy, 'budget');
    const spent = evaluateEarn(input({ offers: [budgeted(1000)], transaction: tx(10_000) }));
    assert.deepEqual([spent.eligible, spent.reasons], [false, ['offer_budget_exhausted']]);
    const condition = spent.offers[0].conditions.find((c) => c.name === 'budget_not_exhausted')!;
    assert.deepEqual(
      [condition.passed, condition.detail],
      [false, '1000 of the budget of 2026-03 of 1000 used, 0 left'],
    );
    // Without a transaction too: the offer is spent whatever the amount.
    assert.deepEqual(evaluateEarn(input({ offers: [budgeted(1200)] })).reasons, ['offer_budget_exhausted']);
    // Another offer of the merchant with budget left wins instead.
    const other = evaluateEarn(
      input({ offers: [budgeted(1000), offer('ofr_b', { cashbackRateBps: 100 })], transaction: tx(10_000) }),
    );
    assert.deepEqual([other.winningOfferId, other.estimatedRewardMinor], ['ofr_b', 100]);
  });

  it('lists every failing reason together, in API.md order', () => {
    const d = evaluateEarn(
      input({ activation: null, groupStatus: 'inactive', merchant: { id: 'mp_1', status: 'inactive' }, offers: [] }),
    );
    assert.deepEqual(d.reasons, ['merchant_not_activated', 'no_active_offer', 'chg_inactive', 'merchant_inactive']);
  });

  it('does not blame min spend of a scheduled offer', () => {
    const offers = [offer('ofr_s', { startsAt: days(1), minSpendMinor: 10_000 })];
    assert.deepEqual(evaluateEarn(input({ offers, transaction: tx(100) })).reasons, ['no_active_offer']);
  });

  it('records a failed currency condition for non-usd transactions', () => {
    const d = evaluateEarn(input({ transaction: tx(1000, { currency: 'eur' }) }));
    assert.equal(d.eligible, false);
    assert.equal(d.offers[0].conditions.find((c) => c.name === 'currency_usd')!.passed, false);
  });

  it('lets the offer with the most reward win, and breaks ties by earliest start then id', () => {
    const offers = [
      offer('ofr_low', { cashbackRateBps: 100 }),
      offer('ofr_high', { cashbackRateBps: 200, brandedRateBps: 100 }),
    ];
    const d = evaluateEarn(input({ offers, transaction: tx(10_000, { mcc: '5812' }) }));
    assert.deepEqual(
      [d.winningOfferId, d.estimatedRewardMinor, d.eligibleOfferIds],
      ['ofr_high', 300, ['ofr_low', 'ofr_high']],
    );
    const tied = [
      offer('ofr_b', { startsAt: days(-2) }),
      offer('ofr_a', { startsAt: days(-2) }),
      offer('ofr_c', { startsAt: days(-1) }),
    ];
    assert.equal(evaluateEarn(input({ offers: tied, transaction: tx(1000) })).winningOfferId, 'ofr_a');
  });

  it('accounts for caps in the winning reward', () => {
    const offers = [
      offer('ofr_big', { cashbackRateBps: 1000, maxRewardMinor: 50 }),
      offer('ofr_small', { cashbackRateBps: 200 }),
    ];
    const d = evaluateEarn(input({ offers, transaction: tx(10_000) }));
    assert.deepEqual([d.winningOfferId, d.estimatedRewardMinor], ['ofr_small', 200]);
  });

  it('qualifies on the whole amount and rewards the amount left after branded spend', () => {
    const offers = [offer('ofr_a', { cashbackRateBps: 500, brandedRateBps: 200, minSpendMinor: 10_000 })];
    const d = evaluateEarn(input({ offers, transaction: { ...tx(10_000), eligibleAmountMinor: 9_800 } }));
    assert.equal(d.eligible, true);
    assert.deepEqual(
      [d.offers[0].reward?.cashbackMinor, d.offers[0].reward?.brandedMinor, d.estimatedRewardMinor],
      [490, 196, 686],
    );
    assert.throws(
      () => evaluateEarn(input({ offers, transaction: { ...tx(10_000), eligibleAmountMinor: 10_001 } })),
      RangeError,
    );
  });

  it('writes every condition of every offer into the trace', () => {
    const d = evaluateEarn(
      input({ cardholderStatus: 'active', cardStatus: 'active', transaction: tx(1000, { mcc: '5812' }) }),
    );
    assert.deepEqual(
      d.offers[0].conditions.map((c) => c.name),
      [
        'activation_before_transaction',
        'chg_active',
        'cardholder_active',
        'card_active',
        'merchant_active',
        'offer_window',
        'min_spend',
        'mcc_allowed',
        'currency_usd',
        'cap_not_exhausted',
      ],
    );
    assert.ok(d.offers[0].conditions.every((c) => c.passed && c.detail.length > 0));
    assert.equal(d.offers[0].reward!.totalMinor, 50);
  });

  it('evaluates the offer window at the transaction instant, not now', () => {
    const offers = [offer('ofr_a', { endsAt: days(-1) })];
    const d = evaluateEarn(
      input({
        offers,
        activation: { status: 'active', activatedAt: days(-5) },
        transaction: tx(1000, { at: days(-2) }),
      }),
    );
    assert.equal(d.eligible, true);
  });

  describe('targeted offers', () => {
    const treated = { inAudience: true, arm: 'treated' as const, detail: 'in: premium' };
    const control = { inAudience: true, arm: 'control' as const, detail: 'in: premium' };
    const outside = { inAudience: false, arm: null, detail: 'the group carries none of the segments premium' };

    it('lets a treated group earn, and refuses a control group (holdout) and one outside the audience', () => {
      const earn = (enrolment: typeof treated | typeof control | typeof outside) =>
        evaluateEarn(input({ offers: [offer('ofr_t', { enrolment })], transaction: tx(2000) }));
      assert.deepEqual([earn(treated).eligible, earn(treated).estimatedRewardMinor], [true, 100]);
      assert.deepEqual(earn(control).reasons, ['holdout']);
      assert.deepEqual(earn(outside).reasons, ['not_in_audience']);
      const trace = earn(control).offers[0].conditions.map((c) => [c.name, c.passed]);
      assert.deepEqual(
        trace.filter(([name]) => name === 'in_audience' || name === 'treated'),
        [
          ['in_audience', true],
          ['treated', false],
        ],
      );
    });

    it('qualifies an auto offer without an activation, while an opt-in one still needs it', () => {
      const auto = offer('ofr_auto', { activation: 'auto', enrolment: treated });
      const d = evaluateEarn(input({ activation: null, offers: [auto], transaction: tx(2000) }));
      assert.deepEqual([d.eligible, d.winningOfferId], [true, 'ofr_auto']);
      assert.equal(
        d.offers[0].conditions.some((c) => c.name === 'activation_before_transaction'),
        false,
        'no activation condition on an auto offer',
      );
      const optIn = offer('ofr_in', { activation: 'opt_in', enrolment: treated });
      assert.deepEqual(evaluateEarn(input({ activation: null, offers: [optIn] })).reasons, ['merchant_not_activated']);
    });

    it('names no missing activation when every offer is auto, and the targeting reasons instead', () => {
      const d = evaluateEarn(
        input({ activation: null, offers: [offer('ofr_auto', { activation: 'auto', enrolment: control })] }),
      );
      assert.deepEqual(d.reasons, ['holdout']);
      const mixed = evaluateEarn(
        input({
          activation: null,
          offers: [offer('ofr_auto', { activation: 'auto', enrolment: outside }), offer('ofr_in')],
        }),
      );
      assert.deepEqual(mixed.reasons, ['merchant_not_activated', 'not_in_audience']);
    });

    it('refuses an offer the group was never enrolled in, without counting it when the offer is not open', () => {
      assert.deepEqual(evaluateEarn(input({ offers: [offer('ofr_t', { enrolment: null })] })).reasons, [
        'not_in_audience',
      ]);
      const scheduled = offer('ofr_s', { startsAt: days(1), enrolment: null });
      assert.deepEqual(evaluateEarn(input({ offers: [scheduled] })).reasons, ['no_active_offer']);
    });
  });

  describe('a tiered offer', () => {
    const tiers = [
      { minSpendMinor: 2_000, cashbackRateBps: 200, brandedRateBps: 0 },
      { minSpendMinor: 10_000, cashbackRateBps: 500, brandedRateBps: 100 },
    ];
    const tiered = offer('ofr_t', { cashbackRateBps: 500, brandedRateBps: 100, minSpendMinor: 500, tiers });

    it('pays the rates of the tier the purchase reaches, not its headline', () => {
      const low = evaluateEarn(input({ offers: [tiered], transaction: tx(9_999) }));
      assert.equal(low.estimatedRewardMinor, 199);
      const high = evaluateEarn(input({ offers: [tiered], transaction: tx(10_000) }));
      assert.equal(high.estimatedRewardMinor, 600);
      const condition = high.offers[0].conditions.find((c) => c.name === 'min_spend')!;
      assert.match(condition.detail, /500 bps cashback and 100 bps branded/);
    });

    it('earns nothing below the lowest tier, even above the offer minimum: below_min_spend', () => {
      const d = evaluateEarn(input({ offers: [tiered], transaction: tx(1_999) }));
      assert.deepEqual([d.eligible, d.reasons], [false, ['below_min_spend']]);
      assert.equal(minimumOf(tiered), 2_000);
      assert.equal(minimumOf({ ...tiered, minSpendMinor: 3_000 }), 3_000);
    });

    it('reads the tier the whole purchase reaches (termsAt), its rates in full', () => {
      assert.equal(termsAt(tiered, 1_999), null);
      assert.deepEqual([termsAt(tiered, 2_000)!.cashbackRateBps, termsAt(tiered, 2_000)!.brandedRateBps], [200, 0]);
      const flat = offer('ofr_p');
      assert.equal(termsAt(flat, 1), flat);
    });
  });
});
