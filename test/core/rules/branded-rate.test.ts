import assert from 'node:assert/strict';
import { brandedBalanceUsable, effectiveBrandedRateBps } from '../../../core/rules/branded-rate';

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
