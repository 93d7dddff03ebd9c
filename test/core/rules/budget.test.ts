import assert from 'node:assert/strict';
import { budgetPeriodKey, budgetState, usedRatio } from '../../../core/rules/budget';

describe('offer budgets (core/rules/budget.ts)', () => {
  it('draws a monthly budget from the calendar month of the purchase in UTC, a lifetime one from one period', () => {
    assert.equal(budgetPeriodKey('month', new Date('2026-11-30T23:59:59.999Z')), '2026-11');
    assert.equal(budgetPeriodKey('month', new Date('2026-12-01T00:00:00.000Z')), '2026-12');
    // The month of the instant in UTC, whatever offset it was written with.
    assert.equal(budgetPeriodKey('month', new Date('2026-12-01T01:00:00+05:00')), '2026-11');
    assert.equal(budgetPeriodKey(null, new Date('2026-11-30T23:59:59Z')), '');
    assert.throws(() => budgetPeriodKey('month', new Date(Number.NaN)), RangeError);
  });

  it('leaves nothing, never less, once used reaches or passes the limit', () => {
    const at = new Date('2026-11-15T00:00:00Z');
    assert.deepEqual(budgetState(1000, 400, 'month', at), {
      limitMinor: 1000,
      usedMinor: 400,
      remainingMinor: 600,
      periodKey: '2026-11',
      period: 'month',
    });
    // An operator lowered the limit below what was used.
    assert.equal(budgetState(300, 400, null, at).remainingMinor, 0);
    assert.throws(() => budgetState(1000, -1, null, at), RangeError);
    assert.throws(() => budgetState(1000.5, 0, null, at), RangeError);
  });

  it('reports the share used, a budget of 0 as fully used', () => {
    assert.equal(usedRatio(1000, 900), 0.9);
    assert.equal(usedRatio(0, 0), 1);
  });
});
