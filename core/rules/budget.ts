// An offer's budget (API.md, "Funded offers"): the reward, cashback and branded, that the offer
// may give across every group of every issuer, for its life or per calendar month (UTC) of the
// purchase's date. Pure: the settlement reads what the purchase's period has used, the rules cap
// the reward by what is left, and the write statement records the use only if it still fits
// (docs/decisions/0039-offer-budgets.md).
import { assertMinor } from '../money';

export const BUDGET_PERIODS = ['month'] as const;
/** null: one budget for the offer's life. */
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number] | null;

/** The period key of a lifetime budget. */
export const LIFETIME_PERIOD_KEY = '';

/**
 * The budget period a purchase dated `at` draws from: '' for a lifetime budget, the calendar month
 * of `at` in UTC ('2026-11') for a monthly one. `at` is the purchase's own date on the issuer's
 * clock, so a late, retried or reprocessed settlement draws from the same period.
 */
export function budgetPeriodKey(period: BudgetPeriod, at: Date): string {
  if (period === null) return LIFETIME_PERIOD_KEY;
  if (Number.isNaN(at.getTime())) throw new RangeError('budgetPeriodKey needs a valid date');
  return at.toISOString().slice(0, 7);
}

/** What an offer's budget holds for one period, as a decision reads it. */
export interface BudgetState {
  limitMinor: number;
  usedMinor: number;
  /** What is left: never negative, even after an operator lowered the limit below what was used. */
  remainingMinor: number;
  /** The period key ('' lifetime, 'YYYY-MM' monthly). */
  periodKey: string;
  period: BudgetPeriod;
}

export function budgetState(limitMinor: number, usedMinor: number, period: BudgetPeriod, at: Date): BudgetState {
  assertMinor(limitMinor, 'limitMinor');
  assertMinor(usedMinor, 'usedMinor');
  return {
    limitMinor,
    usedMinor,
    remainingMinor: Math.max(0, limitMinor - usedMinor),
    periodKey: budgetPeriodKey(period, at),
    period,
  };
}

/** At or above this share of its budget used, an offer is reported (metric and alert). */
export const BUDGET_ALERT_RATIO = 0.9;

/** The share of the budget used, for the metric: 1 for a budget of 0 (nothing can be given). */
export function usedRatio(limitMinor: number, usedMinor: number): number {
  assertMinor(limitMinor, 'limitMinor');
  assertMinor(usedMinor, 'usedMinor');
  return limitMinor === 0 ? 1 : usedMinor / limitMinor;
}
