// What happens to cashback after a purchase earns it (API.md, "Cashback that is paid out"): on
// hold for the return window, then payable; paid out by the issuer; owed back by the group when a
// refund reverses more than it still holds. Pure: the settle and refund steps, the summary and the
// payout run apply these.
import { assertMinor } from '../money';

export const DEFAULT_CASHBACK_HOLD_DAYS = 30;
/** The longest return window an offer or issuer may set: a year covers every retailer's policy. */
export const MAX_CASHBACK_HOLD_DAYS = 365;
const DAY_MS = 86_400_000;

/** The return window of a purchase's cashback: the offer's if it sets one, else the issuer's. */
export function holdDays(offerReturnPeriodDays: number | null | undefined, issuerHoldDays: number): number {
  const days = offerReturnPeriodDays ?? issuerHoldDays;
  if (!Number.isInteger(days) || days < 0 || days > MAX_CASHBACK_HOLD_DAYS)
    throw new RangeError(`a hold of ${days} days is outside 0..${MAX_CASHBACK_HOLD_DAYS}`);
  return days;
}

/** When a purchase's cashback becomes payable: its own date plus the window (issuer's clock). */
export function payableAt(purchaseAt: Date, days: number): Date {
  return new Date(purchaseAt.getTime() + days * DAY_MS);
}

export interface CashbackSplit {
  onHoldMinor: number;
  payableMinor: number;
}

/**
 * The group's cashback balance split into what is on hold and what is payable. `heldMinor` is
 * what purchases still in their window earned and kept; the balance can be lower (cashback applied
 * to what the group owed, a customer-service debit), and then all of it is on hold: nothing on
 * hold is ever payable.
 */
export function splitCashback(balanceMinor: number, heldMinor: number): CashbackSplit {
  assertMinor(balanceMinor, 'balanceMinor');
  assertMinor(heldMinor, 'heldMinor');
  const onHoldMinor = Math.min(balanceMinor, heldMinor);
  return { onHoldMinor, payableMinor: balanceMinor - onHoldMinor };
}

/** What a payout run pays a group: all of its payable cashback, when it reaches the minimum. */
export function payoutDue(payableMinor: number, minimumMinor: number): number {
  assertMinor(payableMinor, 'payableMinor');
  assertMinor(minimumMinor, 'minimumMinor');
  return payableMinor > 0 && payableMinor >= minimumMinor ? payableMinor : 0;
}

export interface ClawbackSplit {
  /** Taken back from the group's cashback balance. */
  fromBalanceMinor: number;
  /** The rest: the group owes it (it was paid out, or applied elsewhere), never lost. */
  owedMinor: number;
}

/** A clawback of `dueMinor`: from the balance as far as it reaches, the rest owed. */
export function splitClawback(dueMinor: number, balanceMinor: number): ClawbackSplit {
  assertMinor(dueMinor, 'dueMinor');
  assertMinor(balanceMinor, 'balanceMinor');
  const fromBalanceMinor = Math.min(dueMinor, balanceMinor);
  return { fromBalanceMinor, owedMinor: dueMinor - fromBalanceMinor };
}

/** How much of newly earned cashback repays what the group owes: as much as it can. */
export function repaymentOf(earnedMinor: number, owedMinor: number): number {
  assertMinor(earnedMinor, 'earnedMinor');
  assertMinor(owedMinor, 'owedMinor');
  return Math.min(earnedMinor, owedMinor);
}
