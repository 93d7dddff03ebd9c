import assert from 'node:assert/strict';
import { commissionOf, issuerShareOf, returnDue } from '../../../core/rules/funding';

describe('funding and commission (core/rules/funding.ts)', () => {
  it("floors the issuer's share, so the rounding unit is the merchant's", () => {
    assert.equal(issuerShareOf(999, 2500), 249);
    assert.equal(issuerShareOf(1000, 10_000), 1000);
    assert.equal(issuerShareOf(1000, 0), 0);
    assert.throws(() => issuerShareOf(1000, 10_001), RangeError);
    assert.throws(() => issuerShareOf(-1, 100), RangeError);
  });

  it('charges a rate of the rewarded-on amount plus the flat amount', () => {
    assert.equal(commissionOf(12_345, { commissionRateBps: 150, commissionFlatMinor: 25 }), 185 + 25);
    assert.equal(commissionOf(0, { commissionRateBps: 150, commissionFlatMinor: 25 }), 25);
    assert.equal(
      commissionOf(Number.MAX_SAFE_INTEGER, { commissionRateBps: 10_000, commissionFlatMinor: 0 }),
      Number.MAX_SAFE_INTEGER,
    );
  });

  it('returns in proportion to the refunds, on cumulative amounts, everything on a full refund', () => {
    // Charged 101 on a purchase of 300, refunded in thirds: 33, then 67 - 33, then the rest.
    const charged = 101;
    let returned = 0;
    let refunded = 0;
    const steps: number[] = [];
    for (const refund of [100, 100, 100]) {
      const due = returnDue({
        chargedMinor: charged,
        purchaseAmountMinor: 300,
        refundedBeforeMinor: refunded,
        refundMinor: refund,
        returnedBeforeMinor: returned,
      });
      steps.push(due);
      returned += due;
      refunded += refund;
    }
    assert.deepEqual(steps, [33, 34, 34]);
    assert.equal(returned, charged);
    // Refunds beyond the purchase return nothing more.
    assert.equal(
      returnDue({
        chargedMinor: 101,
        purchaseAmountMinor: 300,
        refundedBeforeMinor: 300,
        refundMinor: 50,
        returnedBeforeMinor: 101,
      }),
      0,
    );
  });
});
