// Which operator calls need a second operator (API.md, "Operators with names", "Four eyes";
// decision 0059). Pure: each route reads its facts (the claim's reward, the offer's budget, the
// operator's roles) and asks here. A reason names why the call waits; undefined lets it run.

/** Claim approvals above the issuer's threshold wait; this is the threshold of a new issuer. */
export const DEFAULT_APPROVAL_THRESHOLD_MINOR = 50_000;
/** A budget raised by more than this (minor units, per period) waits. */
export const BUDGET_RAISE_LIMIT_MINOR = 1_000_000;

export type FourEyesReason = 'claim_above_threshold' | 'statement_payment' | 'budget_raise' | 'new_admin';

/**
 * What approving a claim posts, as its review computed it. The computed reward counts the
 * completions of cumulative offers the purchase reaches; an operator's amountMinor replaces only
 * the purchase's own reward, so those completions are posted beside it.
 */
export interface ClaimApprovalPosting {
  computedMinor: number;
  completionsMinor: number;
  amountMinor?: number;
}

/** A claim approval posting more than the issuer's threshold. */
export function claimApprovalReason(posting: ClaimApprovalPosting, thresholdMinor: number): FourEyesReason | undefined {
  const posted =
    posting.amountMinor === undefined ? posting.computedMinor : posting.amountMinor + posting.completionsMinor;
  return posted > thresholdMinor ? 'claim_above_threshold' : undefined;
}

/** Every statement payment: money the merchant paid is recorded on one person's word otherwise. */
export function statementPaymentReason(): FourEyesReason {
  return 'statement_payment';
}

/**
 * A budget raised by more than BUDGET_RAISE_LIMIT_MINOR. null is no budget: setting one limits
 * spending (no raise), and removing one is a raise without bound.
 */
export function budgetRaiseReason(before: number | null, after: number | null | undefined): FourEyesReason | undefined {
  if (after === undefined || before === null) return undefined;
  if (after === null) return 'budget_raise';
  return after - before > BUDGET_RAISE_LIMIT_MINOR ? 'budget_raise' : undefined;
}

/** An operator who is to hold `admin` and does not yet: a new admin. */
export function newAdminReason(
  rolesBefore: readonly string[],
  rolesAfter: readonly string[] | undefined,
): FourEyesReason | undefined {
  if (rolesAfter === undefined) return undefined;
  return rolesAfter.includes('admin') && !rolesBefore.includes('admin') ? 'new_admin' : undefined;
}
