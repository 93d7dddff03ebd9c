import assert from 'node:assert/strict';
import { assertMinor, fromDbMinor, requirePositiveMinor, sumMinor } from '../../core/money';
import { isLedgerError, LEDGER_INVALID_INPUT } from '../../core/ledger';

describe('core/money', () => {
  it('accepts only positive safe integers as amounts', () => {
    assert.equal(requirePositiveMinor(1), 1);
    for (const bad of [0, -1, 0.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1, Infinity]) {
      assert.throws(
        () => requirePositiveMinor(bad),
        (e) => isLedgerError(e, LEDGER_INVALID_INPUT),
      );
    }
  });

  it('lets only safe non-negative integers reach the rules', () => {
    assertMinor(0, 'x');
    assertMinor(Number.MAX_SAFE_INTEGER, 'x');
    for (const bad of [-1, 0.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1])
      assert.throws(() => assertMinor(bad, 'x'), RangeError);
  });

  it('converts database BIGINTs only within the safe range', () => {
    assert.equal(fromDbMinor(123n), 123);
    assert.equal(fromDbMinor('-7'), -7);
    assert.throws(() => fromDbMinor(2n ** 60n));
    assert.throws(() => sumMinor([Number.MAX_SAFE_INTEGER, 1]));
    assert.equal(sumMinor([1, 2, 3]), 6);
  });
});
