// Spend eligibility of a group's branded balance at one merchant (API.md). Pure: the
// caller loads the merchant, the group state and the group's grants at that merchant.
import { assertMinor } from '../money';
import type { CatalogueStatus } from './offer-status';

export const SPEND_REASONS = [
  'no_available_balance',
  'below_merchant_minimum',
  'issuer_availability_delay',
  'merchant_availability_delay',
  'chg_inactive',
  'merchant_inactive',
  'branded_balance_disabled',
] as const;
export type SpendReason = (typeof SPEND_REASONS)[number];

export interface SpendGrant {
  remainingMinor: number;
  availableAt: Date;
  expiresAt: Date;
}

export interface SpendInput {
  merchant: {
    status: CatalogueStatus;
    brandedEnabled: boolean;
    spendMinimumMinor: number;
    availabilityDelayDays: number;
  };
  groupStatus: CatalogueStatus;
  grants: SpendGrant[];
  issuerDelayDays: number;
  amountMinor?: number;
  at: Date;
}

export interface SpendDecision {
  eligible: boolean;
  availableBalanceMinor: number;
  pendingBalanceMinor: number;
  spendRestrictionReasons: SpendReason[];
}

export function evaluateSpend(input: SpendInput): SpendDecision {
  const at = input.at.getTime();
  if (input.amountMinor !== undefined) assertMinor(input.amountMinor, 'amountMinor');
  let availableBalanceMinor = 0;
  let pendingBalanceMinor = 0;
  for (const grant of input.grants) {
    assertMinor(grant.remainingMinor, 'grant.remainingMinor');
    // Expired grants are worth nothing here even before the expiry job posts their transfer.
    if (grant.expiresAt.getTime() <= at) continue;
    if (grant.availableAt.getTime() <= at) availableBalanceMinor += grant.remainingMinor;
    else pendingBalanceMinor += grant.remainingMinor;
  }
  const reasons = new Set<SpendReason>();
  if (input.merchant.status !== 'active') reasons.add('merchant_inactive');
  if (input.groupStatus !== 'active') reasons.add('chg_inactive');
  if (!input.merchant.brandedEnabled) reasons.add('branded_balance_disabled');
  if (availableBalanceMinor === 0) {
    reasons.add('no_available_balance');
    // Balance that exists but is not yet usable is held by the longer of the two delays
    // (API.md: available after max(issuer delay, merchant delay)); name that one.
    if (pendingBalanceMinor > 0) {
      reasons.add(
        input.issuerDelayDays > input.merchant.availabilityDelayDays
          ? 'issuer_availability_delay'
          : 'merchant_availability_delay',
      );
    }
  }
  if (input.amountMinor !== undefined && input.amountMinor < input.merchant.spendMinimumMinor)
    reasons.add('below_merchant_minimum');
  const spendRestrictionReasons = SPEND_REASONS.filter((r) => reasons.has(r));
  return {
    eligible: spendRestrictionReasons.length === 0,
    availableBalanceMinor,
    pendingBalanceMinor,
    spendRestrictionReasons,
  };
}
