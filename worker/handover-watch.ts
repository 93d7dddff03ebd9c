// Hands over, within seconds, acknowledged events that never reached their workflow: the API
// died between its commit and its hand-over, or Temporal refused it. The API hands over right
// after the commit; what is still queued `graceMs` later was dropped by it. The per-minute
// handoverSweeper schedule alone would leave such events waiting up to a minute and a half; this
// watch looks every `intervalMs` with one index probe, which also sets the gauge
// rewards_handover_oldest_seconds, and, when something waits, runs the same sweep in-process
// (activities/sweeper.ts; docs/decisions/0020-recovery-in-seconds.md). Handing over an event the
// API is handing over too is harmless: the running workflow ignores a repeated signal, and a
// finished one is only started again for an event still pending (core/domain/handover.ts). The
// schedule stays as the net.
import type { Logger } from '../core/logger';
import { createSweepActivities, type SweepDeps } from '../activities/sweeper';
import { handoverOldestSeconds } from '../core/metrics';
import { runPeriodically, throttled, type Periodic } from './periodic';

export interface HandoverWatchOptions {
  /** How often the queue is probed. */
  intervalMs: number;
  /** Queued events younger than this are left to the API that accepted them. */
  graceMs: number;
  /** Events handed over per turn at most; the next turn takes the rest. */
  limit: number;
}

/** Worst case after an API death: grace + interval + one sweep, about 11 s. */
export const DEFAULT_HANDOVER_WATCH: HandoverWatchOptions = { intervalMs: 3_000, graceMs: 8_000, limit: 1_000 };

/**
 * How long stop() waits for a sweep under way. A sweep may take longer (a large backlog); what
 * it leaves stays queued for the next watch or the schedule, since each page leaves the queue
 * only once handed over. Inside the worker's own shutdown bound (worker/shutdown.ts).
 */
const STOP_WAIT_MS = 5_000;

/** A failing hand-over (Temporal down) is logged at most this often. */
const WARN_EVERY_MS = 30_000;

export type HandoverWatch = Periodic;

export function startHandoverWatch(
  deps: SweepDeps & { logger: Logger },
  overrides: Partial<HandoverWatchOptions> = {},
): HandoverWatch {
  const options = { ...DEFAULT_HANDOVER_WATCH, ...overrides };
  const { sweepHandovers } = createSweepActivities(deps);
  // One index step (handover_pending's index on (queued_at, event_id)): the oldest queued event,
  // whose age is also the gauge rewards_handover_oldest_seconds (0 when the queue is empty).
  const waiting = async (): Promise<boolean> => {
    const nowMs = deps.clock.now().getTime();
    const [{ oldest }] = await deps.db.$queryRaw<Array<{ oldest: Date | null }>>`
      SELECT min(queued_at) AS oldest FROM handover_pending`;
    handoverOldestSeconds.set(oldest ? Math.max(0, nowMs - oldest.getTime()) / 1000 : 0);
    return oldest !== null && oldest.getTime() < nowMs - options.graceMs;
  };

  const warn = throttled(WARN_EVERY_MS, (details: object) =>
    deps.logger.warn(details, 'hand-over watch could not hand over; retrying'),
  );
  const sweep = async () => {
    try {
      if (!(await waiting())) return;
      const result = await sweepHandovers({ olderThanMs: options.graceMs, limit: options.limit });
      if (result.handedOver > 0 || result.alreadyProcessed > 0)
        deps.logger.info(result, 'handed over events the API had not');
      if (result.failed > 0) warn(result);
    } catch (err) {
      warn({ err });
    }
  };
  return runPeriodically(sweep, { intervalMs: options.intervalMs, stopWaitMs: STOP_WAIT_MS });
}
