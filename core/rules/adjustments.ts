// Customer-service adjustments (API.md, Adjustments): which transfer an adjustment is, how it
// reads in the activity feed, and the issuer's per-adjustment limit. Pure.
import type { TransferKind, RewardEventType } from '../ledger';
import { formatMinor } from '../money';

export const BALANCE_TYPES = ['cashback', 'branded'] as const;
export type BalanceType = (typeof BALANCE_TYPES)[number];
export const ADJUSTMENT_REASON_CODES = ['goodwill', 'missing_reward', 'correction', 'fraud', 'write_off'] as const;
export type AdjustmentReasonCode = (typeof ADJUSTMENT_REASON_CODES)[number];
export const DEFAULT_ADJUSTMENT_LIMIT_MINOR = 10_000;

/**
 * A credit (amount > 0) is funded by the issuer; a debit (amount < 0) goes back to it. A write-off
 * is the issuer forgiving cashback the group owes (a refund after payout): a credit of what it owes,
 * not of its balance.
 */
export function adjustmentTransferKind(
  balanceType: BalanceType,
  amountMinor: number,
  reasonCode?: AdjustmentReasonCode,
): TransferKind {
  if (!Number.isSafeInteger(amountMinor) || amountMinor === 0)
    throw new Error(`an adjustment needs a non-zero integer amount, got ${amountMinor}`);
  if (reasonCode === 'write_off') {
    if (balanceType !== 'cashback' || amountMinor < 0) throw new Error(writeOffRule);
    return 'write_off_cashback_owed';
  }
  const direction = amountMinor > 0 ? 'credit' : 'debit';
  return `adjust_${direction}_${balanceType}`;
}

const writeOffRule = 'a write_off forgives owed cashback: balanceType cashback and a positive amountMinor';

/** null when the reason code fits the adjustment; else what is wrong (a write-off credits owed cashback only). */
export function reasonCodeViolation(
  balanceType: BalanceType,
  amountMinor: number,
  reasonCode: AdjustmentReasonCode,
): string | null {
  return reasonCode === 'write_off' && (balanceType !== 'cashback' || amountMinor < 0) ? writeOffRule : null;
}

export function adjustmentEventType(balanceType: BalanceType): RewardEventType {
  return balanceType === 'cashback' ? 'cashback_adjusted' : 'branded_adjusted';
}

/** What the cardholder reads in the activity feed, e.g. "Goodwill credit: $5.00 cashback". */
export function adjustmentDescription(
  balanceType: BalanceType,
  amountMinor: number,
  reason: AdjustmentReasonCode,
): string {
  const label = {
    goodwill: 'Goodwill',
    missing_reward: 'Missing reward',
    correction: 'Correction',
    fraud: 'Fraud',
    write_off: 'Write-off',
  }[reason];
  if (reason === 'write_off') return `${label}: ${formatMinor(amountMinor)} of cashback owed forgiven`;
  const what = balanceType === 'cashback' ? 'cashback' : 'branded balance';
  return `${label} ${amountMinor > 0 ? 'credit' : 'debit'}: ${formatMinor(Math.abs(amountMinor))} ${what}`;
}

/** null when within the limit; else what the error says. */
export function exceedsAdjustmentLimit(amountMinor: number, limitMinor: number): string | null {
  return Math.abs(amountMinor) > limitMinor
    ? `The adjustment of ${formatMinor(Math.abs(amountMinor))} exceeds the issuer's limit of ${formatMinor(limitMinor)} per adjustment.`
    : null;
}
