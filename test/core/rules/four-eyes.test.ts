import assert from 'node:assert/strict';
import {
  BUDGET_RAISE_LIMIT_MINOR,
  budgetRaiseReason,
  claimApprovalReason,
  newAdminReason,
  statementPaymentReason,
} from '../../../core/rules/four-eyes';

describe('four eyes (core/rules/four-eyes.ts)', () => {
  it('holds a claim approval above the threshold, not one at it', () => {
    const computed = (computedMinor: number) => ({ computedMinor, completionsMinor: 0 });
    assert.equal(claimApprovalReason(computed(50_000), 50_000), undefined);
    assert.equal(claimApprovalReason(computed(50_001), 50_000), 'claim_above_threshold');
    assert.equal(claimApprovalReason(computed(1), 0), 'claim_above_threshold');
  });

  it("counts the operator's amount in place of the purchase's own reward, beside the completions it reaches", () => {
    const posting = { computedMinor: 60_000, completionsMinor: 40_000 };
    assert.equal(claimApprovalReason({ ...posting, amountMinor: 10_000 }, 50_000), undefined, '10,000 + 40,000');
    assert.equal(claimApprovalReason({ ...posting, amountMinor: 10_001 }, 50_000), 'claim_above_threshold');
    assert.equal(
      claimApprovalReason({ ...posting, amountMinor: 1 }, 30_000),
      'claim_above_threshold',
      'completions alone',
    );
    assert.equal(
      claimApprovalReason({ computedMinor: 60_000, completionsMinor: 0, amountMinor: 5 }, 50_000),
      undefined,
    );
  });

  it('holds every statement payment', () => {
    assert.equal(statementPaymentReason(), 'statement_payment');
  });

  it('holds a budget raised by more than the limit, or removed; never one lowered, kept or first set', () => {
    assert.equal(budgetRaiseReason(100, 100 + BUDGET_RAISE_LIMIT_MINOR), undefined);
    assert.equal(budgetRaiseReason(100, 101 + BUDGET_RAISE_LIMIT_MINOR), 'budget_raise');
    assert.equal(budgetRaiseReason(5_000_000, 10), undefined);
    assert.equal(budgetRaiseReason(5_000_000, undefined), undefined, 'not changed');
    assert.equal(budgetRaiseReason(5_000_000, null), 'budget_raise', 'no budget: no bound');
    assert.equal(budgetRaiseReason(null, 50_000_000), undefined, 'a first budget limits');
  });

  it('holds an operator who is to become an admin, not one who already is or stays without', () => {
    assert.equal(newAdminReason([], ['admin']), 'new_admin');
    assert.equal(newAdminReason(['support'], ['support', 'admin']), 'new_admin');
    assert.equal(newAdminReason(['admin'], ['admin', 'finance']), undefined);
    assert.equal(newAdminReason(['admin'], ['finance']), undefined);
    assert.equal(newAdminReason(['viewer'], undefined), undefined);
  });
});
