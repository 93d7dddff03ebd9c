// Reads how much of each budgeted offer's budget is used, every minute, into
// rewards_offer_budget_used_ratio, which the RewardsOfferBudgetNearlySpent alert watches (90 %).
// One row per offer: the budget of its current period (the month in UTC of a monthly budget, by
// the server's clock; else its life), for every budgeted offer that has not ended. An offer that
// ends, loses its budget or enters a new month drops its old series, so the alert clears.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import { fromDbMinor } from '../core/money';
import { offerBudgetUsedRatio } from '../core/metrics';
import { budgetPeriodKey, usedRatio } from '../core/rules/budget';
import { runPeriodically, throttled, type Periodic } from './periodic';

export const BUDGET_WATCH_INTERVAL_MS = 60_000;

/** A failing read (the database away) is logged at most this often. */
const WARN_EVERY_MS = 5 * 60_000;

export interface BudgetReading {
  offerId: string;
  merchantId: string;
  /** 'lifetime', or the month 'YYYY-MM'. */
  period: string;
  ratio: number;
}

/** Every live budgeted offer's use of its current period's budget, as of `now`. */
export async function readBudgets(db: Pick<Db, '$queryRaw'>, now: Date): Promise<BudgetReading[]> {
  const month = budgetPeriodKey('month', now);
  const rows = await db.$queryRaw<
    Array<{ offerId: string; merchantId: string; monthly: boolean; limit: bigint; used: bigint }>
  >`
    SELECT o.id AS "offerId", o.merchant_id AS "merchantId", o.budget_period = 'month' AS monthly,
           o.budget_minor AS limit, coalesce(b.used_minor, 0) AS used
      FROM offer o
      LEFT JOIN offer_budget b ON b.offer_id = o.id AND b.period = CASE WHEN o.budget_period = 'month' THEN ${month} ELSE '' END
     WHERE o.budget_minor IS NOT NULL AND o.status = 'active' AND (o.ends_at IS NULL OR o.ends_at > ${now})`;
  return rows.map((r) => ({
    offerId: r.offerId,
    merchantId: r.merchantId,
    period: r.monthly ? month : 'lifetime',
    ratio: usedRatio(fromDbMinor(r.limit), fromDbMinor(r.used)),
  }));
}

export type BudgetWatch = Periodic;

export function startBudgetWatch(
  deps: { db: Pick<Db, '$queryRaw'>; logger: Logger; clock?: { now(): Date } },
  intervalMs = BUDGET_WATCH_INTERVAL_MS,
): BudgetWatch {
  const now = () => deps.clock?.now() ?? new Date();
  const warn = throttled(WARN_EVERY_MS, (err: unknown) =>
    deps.logger.warn({ err }, 'budget watch could not read the offer budgets; retrying'),
  );
  let shown = new Map<string, Record<'offer_id' | 'merchant_id' | 'period', string>>();
  const read = async () => {
    try {
      const readings = await readBudgets(deps.db, now());
      const next = new Map(
        readings.map((r) => [
          `${r.offerId}/${r.period}`,
          { offer_id: r.offerId, merchant_id: r.merchantId, period: r.period },
        ]),
      );
      for (const [key, labels] of shown) if (!next.has(key)) offerBudgetUsedRatio.remove(labels);
      for (const r of readings)
        offerBudgetUsedRatio.set({ offer_id: r.offerId, merchant_id: r.merchantId, period: r.period }, r.ratio);
      shown = next;
    } catch (err) {
      // The gauges keep their last readings while the database is away.
      warn(err);
    }
  };
  return runPeriodically(read, { intervalMs, runAtStart: true });
}
