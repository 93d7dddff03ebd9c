// A merchant's statement (API.md, "Funded offers", Statements): its lines from the transfers that
// moved the merchant's receivable, its total and its status. Pure: the billing run (core/domain/
// statements.ts) sums the transfers by kind in SQL and this turns the sums into the statement, so
// that the total is by construction the receivable's net movement over those transfers.
import type { TransferKind } from '../ledger';

export const STATEMENT_LINES = [
  'cashbackFundedMinor',
  'brandedFundedMinor',
  'brandedSpentMinor',
  'clawedBackMinor',
  'commissionMinor',
] as const;
export type StatementLine = (typeof STATEMENT_LINES)[number];

export type StatementLines = Record<StatementLine, number> & { breakageMinor: number };

/**
 * Where each transfer kind that moves a merchant's receivable lands on its statement, and with
 * which sign on that line. A line's sign on the total: funded and commission add to what the
 * merchant owes, spent and clawed back take from it. Every kind that debits or credits a
 * receivable is here except the merchant's own payments, which statements exclude
 * (test/core/rules/statements.test.ts checks this against the account plan).
 */
export const RECEIVABLE_LINES: Partial<Record<TransferKind, { line: StatementLine; sign: 1 | -1 }>> = {
  earn_cashback: { line: 'cashbackFundedMinor', sign: 1 },
  issuer_share_cashback: { line: 'cashbackFundedMinor', sign: -1 },
  earn_branded: { line: 'brandedFundedMinor', sign: 1 },
  issuer_share_branded: { line: 'brandedFundedMinor', sign: -1 },
  spend_branded: { line: 'brandedSpentMinor', sign: 1 },
  clawback_cashback: { line: 'clawedBackMinor', sign: 1 },
  clawback_branded: { line: 'clawedBackMinor', sign: 1 },
  clawback_cashback_owed: { line: 'clawedBackMinor', sign: 1 },
  issuer_share_returned: { line: 'clawedBackMinor', sign: -1 },
  commission_charged: { line: 'commissionMinor', sign: 1 },
  commission_returned: { line: 'commissionMinor', sign: -1 },
};

/** Payments settle statements; they are never on one. */
export const EXCLUDED_FROM_STATEMENTS: readonly TransferKind[] = ['merchant_payment'];

const TOTAL_SIGN: Record<StatementLine, 1 | -1> = {
  cashbackFundedMinor: 1,
  brandedFundedMinor: 1,
  brandedSpentMinor: -1,
  clawedBackMinor: -1,
  commissionMinor: 1,
};

/** What the merchant owes for these lines: funded and commission, less spent and clawed back. */
export function totalDue(lines: Record<StatementLine, number>): number {
  return STATEMENT_LINES.reduce((sum, line) => sum + TOTAL_SIGN[line] * lines[line], 0);
}

/** The lines from per-kind sums of transfer amounts; breakage is information, outside the total. */
export function linesOf(sums: ReadonlyArray<{ kind: string; amountMinor: number }>, breakageMinor = 0): StatementLines {
  const lines: StatementLines = {
    cashbackFundedMinor: 0,
    brandedFundedMinor: 0,
    brandedSpentMinor: 0,
    clawedBackMinor: 0,
    commissionMinor: 0,
    breakageMinor,
  };
  for (const { kind, amountMinor } of sums) {
    const place = RECEIVABLE_LINES[kind as TransferKind];
    if (!place) throw new Error(`transfer kind ${kind} has no statement line`);
    lines[place.line] += place.sign * amountMinor;
  }
  return lines;
}

/**
 * `paid` once what was paid covers the total; a statement whose total is zero or below (the
 * merchant's honoured spend and clawbacks outweighed what it funded) owes nothing and is issued
 * paid: what the programme owes the merchant then is settled outside the service.
 */
export function statementStatus(totalDueMinor: number, paidMinor: number): 'issued' | 'paid' {
  return paidMinor >= totalDueMinor ? 'paid' : 'issued';
}

const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** A billing period ('2026-11'): the calendar month in UTC, [start, end). */
export function periodBounds(period: string): { start: Date; end: Date } {
  const m = PERIOD.exec(period);
  if (!m) throw new RangeError(`period ${period} is not YYYY-MM`);
  const year = Number(m[1]);
  const month = Number(m[2]) - 1;
  return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
}

/** The period an instant falls in (UTC). */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}
