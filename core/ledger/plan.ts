// Which accounts each transfer kind debits and credits (DESIGN.md, Ledger table), and the
// reward event that reports it. Pure: the activities apply the plan.
import { accounts, type AccountRef } from './accounts';
import { assert } from './errors';

export const TRANSFER_KINDS = [
  'earn_cashback',
  'earn_branded',
  'spend_branded',
  'expire_branded',
  'clawback_cashback',
  'clawback_branded',
  'adjust_credit_cashback',
  'adjust_credit_branded',
  'adjust_debit_cashback',
  'adjust_debit_branded',
  'adjust_debit_cashback_owed',
  'payout_cashback',
  'clawback_cashback_owed',
  'repay_cashback_owed',
  'write_off_cashback_owed',
  'issuer_share_cashback',
  'issuer_share_branded',
  'issuer_share_returned',
  'commission_charged',
  'commission_returned',
  'merchant_payment',
] as const;
export type TransferKind = (typeof TRANSFER_KINDS)[number];

export const REWARD_EVENT_TYPES = [
  'cashback_earned',
  'branded_earned',
  'branded_spent',
  'branded_expired',
  'cashback_clawed_back',
  'branded_clawed_back',
  'cashback_adjusted',
  'branded_adjusted',
  'cashback_paid_out',
  'cashback_owed_repaid',
] as const;
export type RewardEventType = (typeof REWARD_EVENT_TYPES)[number];

/** Types whose reward events carry a signed amount (a debit adjustment is negative). */
export const SIGNED_REWARD_EVENT_TYPES: readonly RewardEventType[] = ['cashback_adjusted', 'branded_adjusted'];

/**
 * Types whose reward events are always negative: cashback leaving the group's balance (paid out,
 * or applied to what the group owes), shown as the cardholder sees it in the activity feed.
 */
export const NEGATIVE_REWARD_EVENT_TYPES: readonly RewardEventType[] = ['cashback_paid_out', 'cashback_owed_repaid'];

export interface TransferParties {
  issuerId: string;
  chgId: string;
  /** Unused by transfers that involve no merchant (cashback adjustments, payouts, repayments). */
  merchantId: string;
}

export interface TransferPlan {
  debit: AccountRef;
  credit: AccountRef;
}

export function planTransfer(kind: TransferKind, p: TransferParties): TransferPlan {
  // Built on use: a cashback adjustment has no merchant to name an account after.
  const receivable = () => accounts.merchantReceivable(p.issuerId, p.merchantId);
  const cashback = () => accounts.chgCashback(p.issuerId, p.chgId);
  const branded = () => accounts.chgBranded(p.issuerId, p.chgId, p.merchantId);
  const issuer = () => accounts.issuerAdjustments(p.issuerId);
  const owed = () => accounts.chgCashbackOwed(p.issuerId, p.chgId);
  const funding = () => accounts.issuerFunding(p.issuerId);
  const commission = () => accounts.commission(p.issuerId, p.merchantId);
  switch (kind) {
    // The merchant funds the reward: we are owed by it and owe the group.
    case 'earn_cashback':
      return { debit: receivable(), credit: cashback() };
    case 'earn_branded':
      return { debit: receivable(), credit: branded() };
    // The merchant honours the balance instead of funding it: our liability and its
    // receivable both shrink.
    case 'spend_branded':
      return { debit: branded(), credit: receivable() };
    // Unused balance becomes the merchant's breakage income.
    case 'expire_branded':
      return { debit: branded(), credit: accounts.breakage(p.issuerId, p.merchantId) };
    // A refund reverses the earn: debit the liability it was credited to.
    case 'clawback_cashback':
      return { debit: cashback(), credit: receivable() };
    case 'clawback_branded':
      return { debit: branded(), credit: receivable() };
    // Customer service: the issuer funds a credit (never the merchant) and takes back a debit.
    case 'adjust_credit_cashback':
      return { debit: issuer(), credit: cashback() };
    case 'adjust_credit_branded':
      return { debit: issuer(), credit: branded() };
    case 'adjust_debit_cashback':
      return { debit: cashback(), credit: issuer() };
    case 'adjust_debit_branded':
      return { debit: branded(), credit: issuer() };
    // A refund takes back a claim's credit (issuer funded) beyond what the group still holds (it
    // was paid out): the issuer gets it back in full and the group owes the rest.
    case 'adjust_debit_cashback_owed':
      return { debit: owed(), credit: issuer() };
    // The issuer paid the group's cashback out (a statement credit, a transfer): we owe the
    // group nothing more of it, and owe the issuer what it paid for the programme.
    case 'payout_cashback':
      return { debit: cashback(), credit: accounts.issuerPayable(p.issuerId) };
    // A refund reverses more cashback than the group holds (it was paid out): the merchant is
    // credited in full and the group owes the rest, never lost.
    case 'clawback_cashback_owed':
      return { debit: owed(), credit: receivable() };
    // Cashback the group earns later repays what it owes first.
    case 'repay_cashback_owed':
      return { debit: cashback(), credit: owed() };
    // The issuer forgives what the group owes (an adjustment with reasonCode write_off).
    case 'write_off_cashback_owed':
      return { debit: issuer(), credit: owed() };
    // A funded offer: the reward's own transfer debits the merchant's receivable in full, and this
    // moves the issuer's share of it to the issuer (docs/decisions/0040-merchant-statements.md).
    case 'issuer_share_cashback':
    case 'issuer_share_branded':
      return { debit: funding(), credit: receivable() };
    // A refund's clawback credits the receivable in full; this gives the issuer its share back.
    case 'issuer_share_returned':
      return { debit: receivable(), credit: funding() };
    // What the merchant owes the programme for a qualifying purchase, and its return on a refund.
    case 'commission_charged':
      return { debit: receivable(), credit: commission() };
    case 'commission_returned':
      return { debit: commission(), credit: receivable() };
    // The merchant paid (part of) a statement: cash in, receivable down.
    case 'merchant_payment':
      return { debit: accounts.merchantCash(p.issuerId), credit: receivable() };
  }
}

/**
 * The reward event each reward transfer reports. The funding and commission transfers report none
 * of their own: they belong to the reward event of the reward they accompany (its earn, or a
 * refund's clawback); a merchant's payment belongs to no group's rewards.
 */
const EVENT_TYPE: Record<Exclude<TransferKind, AccompanyingKind | 'merchant_payment'>, RewardEventType> = {
  earn_cashback: 'cashback_earned',
  earn_branded: 'branded_earned',
  spend_branded: 'branded_spent',
  expire_branded: 'branded_expired',
  clawback_cashback: 'cashback_clawed_back',
  clawback_branded: 'branded_clawed_back',
  adjust_credit_cashback: 'cashback_adjusted',
  adjust_credit_branded: 'branded_adjusted',
  adjust_debit_cashback: 'cashback_adjusted',
  adjust_debit_branded: 'branded_adjusted',
  adjust_debit_cashback_owed: 'cashback_adjusted',
  payout_cashback: 'cashback_paid_out',
  clawback_cashback_owed: 'cashback_clawed_back',
  repay_cashback_owed: 'cashback_owed_repaid',
  write_off_cashback_owed: 'cashback_adjusted',
};

/** Transfers that accompany a reward's own transfer and belong to its reward event. */
export const ACCOMPANYING_KINDS = [
  'issuer_share_cashback',
  'issuer_share_branded',
  'issuer_share_returned',
  'commission_charged',
  'commission_returned',
] as const;
export type AccompanyingKind = (typeof ACCOMPANYING_KINDS)[number];

export function rewardEventTypeFor(kind: TransferKind): RewardEventType | null {
  return (EVENT_TYPE as Partial<Record<TransferKind, RewardEventType>>)[kind] ?? null;
}

export interface PlannedEntry {
  accountId: string;
  /** Signed: positive = debit, negative = credit. */
  amountMinor: number;
}

/** The two entries of a transfer; asserts they balance. */
export function entriesOf(plan: TransferPlan, amountMinor: number): [PlannedEntry, PlannedEntry] {
  assert(Number.isSafeInteger(amountMinor) && amountMinor > 0, `transfer amount must be positive, got ${amountMinor}`);
  assert(plan.debit.id !== plan.credit.id, 'a transfer needs two distinct accounts');
  const entries: [PlannedEntry, PlannedEntry] = [
    { accountId: plan.debit.id, amountMinor },
    { accountId: plan.credit.id, amountMinor: -amountMinor },
  ];
  assert(entries[0].amountMinor + entries[1].amountMinor === 0, 'debits must equal credits');
  return entries;
}

export function isTransferKind(value: string): value is TransferKind {
  return (TRANSFER_KINDS as readonly string[]).includes(value);
}
