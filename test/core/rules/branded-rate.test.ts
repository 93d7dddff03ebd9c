import assert from 'node:assert/strict';
import {
  brandedBalanceUsable,
  effectiveBrandedRateBps,
  usableReward,
  withUsableBranded,
} from '../../../core/rules/branded-rate';

describe('effective branded rate', () => {
  const merchant = { brandedEnabled: true, brandedAvailabilityDelayDays: 3, brandedExpiryDays: 365 };
  const cases: Array<[string, Partial<typeof merchant>, number, number]> = [
    ['pays the offer rate when balance can be spent', {}, 0, 200],
    ['pays the offer rate up to a delay one day short of expiry', {}, 364, 200],
    ['pays nothing when the issuer delay reaches expiry', {}, 365, 0],
    ['pays nothing when the merchant delay reaches expiry', { brandedAvailabilityDelayDays: 400 }, 0, 0],
    ['pays nothing when the merchant has no branded balance', { brandedEnabled: false }, 0, 0],
  ];
  for (const [name, overrides, issuerDelay, expected] of cases) {
    it(name, () => {
      assert.equal(effectiveBrandedRateBps(200, { ...merchant, ...overrides }, issuerDelay), expected);
      assert.equal(brandedBalanceUsable({ ...merchant, ...overrides }, issuerDelay), expected > 0);
    });
  }
});

describe('an offer whose branded balance cannot be used', () => {
  const tiers = [
    { minSpendMinor: 0, cashbackRateBps: 100, brandedRateBps: 50 },
    { minSpendMinor: 5_000, cashbackRateBps: 200, brandedRateBps: 300 },
  ];

  it('pays no branded rate in any tier, and keeps every cashback rate', () => {
    const offer = { id: 'ofr_t', brandedRateBps: 300, cashbackRateBps: 200, tiers };
    const unusable = withUsableBranded(offer, false);
    assert.deepEqual(
      [unusable.brandedRateBps, unusable.tiers.map((t) => [t.cashbackRateBps, t.brandedRateBps])],
      [
        0,
        [
          [100, 0],
          [200, 0],
        ],
      ],
    );
    assert.equal(withUsableBranded(offer, true), offer);
    assert.deepEqual(withUsableBranded({ brandedRateBps: 300 }, false), { brandedRateBps: 0 });
  });

  it('shows the reward as it pays: percent and tiered alike', () => {
    assert.deepEqual(usableReward({ kind: 'percent', cashbackRateBps: 100, brandedRateBps: 50 }, false), {
      kind: 'percent',
      cashbackRateBps: 100,
      brandedRateBps: 0,
    });
    const tiered = usableReward({ kind: 'tiered', tiers }, false);
    assert.deepEqual(tiered.kind === 'tiered' && tiered.tiers.map((t) => t.brandedRateBps), [0, 0]);
  });
});
