import assert from 'node:assert/strict';
import {
  DEFAULT_CASHBACK_HOLD_DAYS,
  holdDays,
  payableAt,
  payoutDue,
  repaymentOf,
  splitCashback,
  splitClawback,
} from '../../../core/rules/cashback';

describe('core/rules/cashback', () => {
  describe('holdDays', () => {
    it("takes the offer's return period over the issuer's hold, 0 included", () => {
      for (const [offer, issuer, expected] of [
        [null, 30, 30],
        [undefined, 14, 14],
        [60, 30, 60],
        [0, 30, 0],
        [null, 0, 0],
      ] as const)
        assert.equal(holdDays(offer, issuer), expected, `offer ${offer}, issuer ${issuer}`);
      assert.equal(DEFAULT_CASHBACK_HOLD_DAYS, 30);
    });
    it('refuses a window outside 0..365 days or not whole', () => {
      for (const days of [-1, 366, 1.5]) assert.throws(() => holdDays(days, 30), RangeError);
    });
  });

  it('payableAt counts whole days from the purchase', () => {
    const at = new Date('2026-11-01T10:00:00.000Z');
    assert.equal(payableAt(at, 30).toISOString(), '2026-12-01T10:00:00.000Z');
    assert.equal(payableAt(at, 0).toISOString(), at.toISOString());
  });

  describe('splitCashback', () => {
    it('is payable beyond what is held, on hold up to the balance', () => {
      for (const [balance, held, onHold, payable] of [
        [0, 0, 0, 0],
        [1000, 0, 0, 1000],
        [1000, 400, 400, 600],
        [1000, 1000, 1000, 0],
        // Less in the balance than held (repaid what was owed, a debit): all on hold, none payable.
        [300, 400, 300, 0],
      ] as const) {
        const split = splitCashback(balance, held);
        assert.deepEqual([split.onHoldMinor, split.payableMinor], [onHold, payable], `${balance}/${held}`);
        assert.equal(split.onHoldMinor + split.payableMinor, balance);
      }
    });
    it('refuses negative or fractional amounts', () => {
      assert.throws(() => splitCashback(-1, 0), RangeError);
      assert.throws(() => splitCashback(1, 0.5), RangeError);
    });
  });

  it('payoutDue pays all of the payable cashback from the minimum on, nothing below it', () => {
    for (const [payable, minimum, expected] of [
      [0, 0, 0],
      [0, 1, 0],
      [1, 1, 1],
      [499, 500, 0],
      [500, 500, 500],
      [12_345, 1, 12_345],
    ] as const)
      assert.equal(payoutDue(payable, minimum), expected, `${payable} >= ${minimum}`);
  });

  it('splitClawback takes from the balance first and records the rest as owed', () => {
    for (const [due, balance, fromBalance, owed] of [
      [0, 100, 0, 0],
      [50, 100, 50, 0],
      [100, 100, 100, 0],
      [100, 30, 30, 70],
      [100, 0, 0, 100],
    ] as const) {
      const split = splitClawback(due, balance);
      assert.deepEqual([split.fromBalanceMinor, split.owedMinor], [fromBalance, owed]);
      assert.equal(split.fromBalanceMinor + split.owedMinor, due, 'nothing lost');
    }
  });

  it('repaymentOf repays what is owed first, as far as the new cashback reaches', () => {
    assert.equal(repaymentOf(30, 0), 0);
    assert.equal(repaymentOf(30, 70), 30);
    assert.equal(repaymentOf(100, 70), 70);
  });
});
