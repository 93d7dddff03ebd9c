// Offer budgets in the database (docs/decisions/0039-offer-budgets.md): one counter row per
// (offer, period) in offer_budget, the hottest row of the system, since every settlement at a
// budgeted offer writes it. So it is never locked to be read: the settlement reads what the period
// has used (core/domain/merchant-offers.ts), decides, and its one write statement records the use
// with a guarded upsert that takes the row's lock last, after every ledger account's, and only if
// the use still fits. A use that no longer fits (another settlement took what was left meanwhile)
// writes nothing and the settlement decides again; the row's lock is held only from that statement
// to the commit. Refunds give their clawback back to the period the purchase used.
import { Prisma } from '../../prisma/generated/client';
import { assertMinor } from '../money';
import type { Tx } from './ledger/tx';

/** The budget a settlement draws on, as its decision read it. */
export interface BudgetUse {
  offerId: string;
  /** The purchase's period ('' lifetime, 'YYYY-MM'). */
  periodKey: string;
  /** The purchase's reward, cashback and branded: what it takes from the budget. */
  amountMinor: number;
  /** What the period had used when the decision read it. */
  usedMinor: number;
  /**
   * The budget capped the reward (a partial reward at the edge): the use is recorded only if the
   * period still stands exactly as read, so that the reward is what was really left. Otherwise any
   * state in which it still fits will do: the reward would have been the same.
   */
  cappedByBudget: boolean;
}

/** The budget's row changed under the decision: nothing was written; decide again. */
export class BudgetRaceLost extends Error {
  constructor(readonly use: BudgetUse) {
    super(`the budget of offer ${use.offerId} (${use.periodKey || 'lifetime'}) no longer holds ${use.amountMinor}`);
    this.name = 'BudgetRaceLost';
  }
}

/**
 * The CTE `name` that records `use` in the caller's write statement, returning one row when it did. `after` is a boolean SQL expression that makes the statement take its other row locks
 * first (it reads their CTE to the end): the budget row is locked last, so that its lock is held
 * for the shortest time and in the same order by every writer.
 */
export function budgetUseCte(use: BudgetUse, at: Date, after: Prisma.Sql, name = 'budget_use'): Prisma.Sql {
  assertMinor(use.amountMinor, 'amountMinor');
  assertMinor(use.usedMinor, 'usedMinor');
  const limit = Prisma.sql`(SELECT o.budget_minor FROM offer o WHERE o.id = ${use.offerId})`;
  const amount = Prisma.sql`${String(use.amountMinor)}::bigint`;
  // A new row means the period had used nothing (rows are never deleted), which is what a decision
  // that found no row read: only an existing row can have moved, and the conflict arm checks it.
  // A proposed row that does not fit proposes nothing, and a row that exists would not fit either.
  return Prisma.sql`${Prisma.raw(name)} AS (
    INSERT INTO offer_budget AS b (offer_id, period, used_minor, updated_at)
    SELECT ${use.offerId}, ${use.periodKey}, ${amount}, ${at}
     WHERE ${after} AND ${amount} <= ${limit}
    ON CONFLICT (offer_id, period) DO UPDATE SET used_minor = b.used_minor + EXCLUDED.used_minor, updated_at = EXCLUDED.updated_at
     WHERE b.used_minor + EXCLUDED.used_minor <= ${limit}
       ${use.cappedByBudget ? Prisma.sql`AND b.used_minor = ${String(use.usedMinor)}::bigint` : Prisma.empty}
    RETURNING b.used_minor)`;
}

/**
 * Gives a refund's clawback back to the period its purchase used. Called last in the refund's
 * transaction, after its ledger accounts are locked, as the settlement's write does.
 */
export async function returnBudget(
  tx: Tx,
  input: { offerId: string; periodKey: string; amountMinor: number; at: Date },
): Promise<void> {
  assertMinor(input.amountMinor, 'amountMinor');
  if (input.amountMinor === 0) return;
  // The CHECK (used_minor >= 0) backs this: a period never gives back more than it gave.
  const updated = await tx.$executeRaw`
    UPDATE offer_budget SET used_minor = used_minor - ${input.amountMinor}, updated_at = ${input.at}
     WHERE offer_id = ${input.offerId} AND period = ${input.periodKey}`;
  if (updated !== 1)
    throw new Error(`offer ${input.offerId} has no budget row for ${input.periodKey || 'its life'} to give back to`);
}
