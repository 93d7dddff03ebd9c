import assert from 'node:assert/strict';
import { evaluateSpend, type SpendInput } from '../../../core/rules/spend-eligibility';

const at = new Date('2026-03-01T00:00:00Z');
const days = (n: number) => new Date(at.getTime() + n * 86_400_000);
const base = (over: Partial<SpendInput> = {}): SpendInput => ({
  merchant: { status: 'active', brandedEnabled: true, spendMinimumMinor: 500, availabilityDelayDays: 3 },
  groupStatus: 'active',
  grants: [{ remainingMinor: 1000, availableAt: days(-1), expiresAt: days(300) }],
  issuerDelayDays: 0,
  at,
  ...over,
});

describe('evaluateSpend', () => {
  it('is eligible with available balance and an amount above the minimum', () => {
    assert.deepEqual(evaluateSpend(base({ amountMinor: 800 })), {
      eligible: true,
      availableBalanceMinor: 1000,
      pendingBalanceMinor: 0,
      spendRestrictionReasons: [],
    });
  });
  it('reports no_available_balance without grants', () => {
    assert.deepEqual(evaluateSpend(base({ grants: [] })).spendRestrictionReasons, ['no_available_balance']);
  });
  it('ignores expired grants', () => {
    const d = evaluateSpend(base({ grants: [{ remainingMinor: 1000, availableAt: days(-10), expiresAt: at }] }));
    assert.deepEqual([d.availableBalanceMinor, d.spendRestrictionReasons], [0, ['no_available_balance']]);
  });
  it('reports below_merchant_minimum', () => {
    assert.deepEqual(evaluateSpend(base({ amountMinor: 499 })).spendRestrictionReasons, ['below_merchant_minimum']);
  });
  it('blames the merchant delay for pending balance when it is the longer one', () => {
    const d = evaluateSpend(
      base({ grants: [{ remainingMinor: 700, availableAt: days(2), expiresAt: days(300) }], issuerDelayDays: 1 }),
    );
    assert.deepEqual(
      [d.pendingBalanceMinor, d.spendRestrictionReasons],
      [700, ['no_available_balance', 'merchant_availability_delay']],
    );
  });
  it('blames the issuer delay when it is the longer one', () => {
    const d = evaluateSpend(
      base({ grants: [{ remainingMinor: 700, availableAt: days(2), expiresAt: days(300) }], issuerDelayDays: 7 }),
    );
    assert.deepEqual(d.spendRestrictionReasons, ['no_available_balance', 'issuer_availability_delay']);
  });
  it('reports chg_inactive, merchant_inactive and branded_balance_disabled', () => {
    const d = evaluateSpend(
      base({
        groupStatus: 'inactive',
        merchant: { status: 'inactive', brandedEnabled: false, spendMinimumMinor: 0, availabilityDelayDays: 0 },
      }),
    );
    assert.deepEqual(d.spendRestrictionReasons, ['chg_inactive', 'merchant_inactive', 'branded_balance_disabled']);
    assert.equal(d.eligible, false);
  });
});
