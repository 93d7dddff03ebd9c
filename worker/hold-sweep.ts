// Every few minutes, takes the cashback holds that matured out of their groups' running totals
// (core/domain/cashback-held.ts), so that what a reader subtracts from a total (the holds matured
// since the last sweep) stays a few rows. Readers are exact without it: a sweep that fails or
// lags only makes their correction read more rows. Every worker runs it; two sweeps skip each
// other's groups (SKIP LOCKED), and a turn that left work comes back sooner.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import { sweepMaturedHolds } from '../core/domain/cashback-held';
import { runPeriodically, throttled, type Periodic } from './periodic';

export const HOLD_SWEEP_INTERVAL_MS = 5 * 60_000;
/** After a turn that left groups due: soon, but not in a tight loop. */
const MORE_WAITING_MS = 1_000;

/** A failing turn (the database away) is logged at most this often. */
const WARN_EVERY_MS = 5 * 60_000;

export type HoldSweep = Periodic;

export function startHoldSweep(
  deps: { db: Pick<Db, '$queryRaw'>; logger: Logger },
  intervalMs = HOLD_SWEEP_INTERVAL_MS,
): HoldSweep {
  const warn = throttled(WARN_EVERY_MS, (err: unknown) =>
    deps.logger.warn({ err }, 'hold sweep could not take matured holds out of the totals; retrying'),
  );
  const turn = async (): Promise<number | void> => {
    try {
      const { swept, more } = await sweepMaturedHolds(deps.db);
      if (swept > 0) deps.logger.debug({ swept, more }, 'matured cashback holds swept');
      return more ? MORE_WAITING_MS : undefined;
    } catch (err) {
      warn(err);
    }
  };
  return runPeriodically(turn, { intervalMs, runAtStart: true });
}
