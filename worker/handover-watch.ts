// Keeps the hand-over queue moving (docs/decisions/0037-admission-at-the-hand-over.md). An API
// admits and hands over the events it has just stored when there is room under the bound on
// purchases in flight; everything else waits in handover_pending: events that found no room,
// those of an issuer with older ones waiting, those of an API that died before its hand-over or
// that Temporal refused. Every worker runs this watch: one probe every `intervalMs` and, while
// events wait, a sweep every `busyIntervalMs` (activities/sweeper.ts) that admits them as places
// free up, issuers in turn, and hands over again what was admitted `graceMs` ago and never
// processed. Several workers sweeping at once is safe: admissions are serialised in the
// database, and a repeated hand-over is harmless (core/domain/handover.ts). The per-minute
// handoverSweeper schedule stays as the net. The probe also reports the queue by issuer
// (rewards_handover_oldest_seconds, rewards_handover_waiting_events) every `metricsIntervalMs`.
import type { Logger } from '../core/logger';
import { createHandoverSweep, type SweepDeps } from '../activities/sweeper';
import { holdingPlace } from '../core/domain/handover-admission';
import { handoverInFlight, handoverOldestSeconds, handoverWaitingEvents } from '../core/metrics';
import { runPeriodically, throttled, type Periodic } from './periodic';

export interface HandoverWatchOptions {
  /** How often the queue is probed when nothing waits. */
  intervalMs: number;
  /** How often it is swept while events wait: how soon a place that frees up is taken again. */
  busyIntervalMs: number;
  /** An admitted event not processed this long after its admission is handed over again (then at growing intervals). */
  graceMs: number;
  /** Events handed over per turn at most; the next turn takes the rest. */
  limit: number;
  /** How often the queue's gauges by issuer are read (a scan of the queue). */
  metricsIntervalMs: number;
}

/** Worst case after an API death: one probe interval and one sweep for what it never admitted, grace + interval for what it did. */
export const DEFAULT_HANDOVER_WATCH: HandoverWatchOptions = {
  intervalMs: 3_000,
  busyIntervalMs: 100,
  graceMs: 8_000,
  limit: 1_000,
  metricsIntervalMs: 15_000,
};

/**
 * How long stop() waits for a sweep under way. A sweep may take longer (a large backlog); what
 * it leaves stays queued for the next watch or the schedule, since each page is marked before
 * it is handed over. Inside the worker's own shutdown bound (worker/shutdown.ts).
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
  const { sweepHandovers, handOverWaiting } = createHandoverSweep(deps);
  let metricsReadAtMs = -Infinity;
  let sweptAtMs = -Infinity;

  // Two index steps: the oldest waiting event, and the oldest admission.
  const probe = async (): Promise<{ waiting: boolean; staleSince: boolean }> => {
    const nowMs = deps.clock.now().getTime();
    const [row] = await deps.db.$queryRaw<Array<{ waiting: Date | null; admitted: Date | null }>>`
      SELECT (SELECT min(queued_at) FROM handover_pending WHERE admitted_at IS NULL) AS waiting,
             (SELECT min(admitted_at) FROM handover_pending WHERE admitted_at IS NOT NULL) AS admitted`;
    return {
      waiting: row.waiting !== null,
      staleSince: row.admitted !== null && row.admitted.getTime() < nowMs - options.graceMs,
    };
  };

  const warn = throttled(WARN_EVERY_MS, (details: object) =>
    deps.logger.warn(details, 'hand-over watch could not hand over; retrying'),
  );
  const turn = async (): Promise<number> => {
    try {
      if (performance.now() - metricsReadAtMs >= options.metricsIntervalMs) {
        metricsReadAtMs = performance.now();
        await readGauges(deps);
      }
      const { waiting, staleSince } = await probe();
      if (!waiting && !staleSince) return options.intervalMs;
      // The whole sweep once an interval; between, while events wait, only their admission.
      const whole = performance.now() - sweptAtMs >= options.intervalMs;
      if (whole) sweptAtMs = performance.now();
      const result = whole
        ? await sweepHandovers({ olderThanMs: options.graceMs, limit: options.limit })
        : await handOverWaiting({ limit: options.limit });
      if (result.failed > 0) warn(result);
      return waiting ? options.busyIntervalMs : options.intervalMs;
    } catch (err) {
      warn({ err });
      return options.intervalMs;
    }
  };
  return runPeriodically(turn, { intervalMs: options.intervalMs, stopWaitMs: STOP_WAIT_MS });
}

/** The queue by issuer, and what is in flight: one scan of handover_pending. */
async function readGauges(deps: SweepDeps): Promise<void> {
  const now = deps.clock.now();
  const rows = await deps.db.$queryRaw<
    Array<{ issuer_id: string | null; waiting: number; oldest: Date | null; in_flight: number }>
  >`
    SELECT issuer_id, count(*) FILTER (WHERE admitted_at IS NULL)::int AS waiting,
           min(queued_at) FILTER (WHERE admitted_at IS NULL) AS oldest,
           count(*) FILTER (WHERE ${holdingPlace(now)})::int AS in_flight
      FROM handover_pending GROUP BY issuer_id`;
  // Reset and set in one synchronous step: a scrape never sees the gauges half-written.
  handoverOldestSeconds.reset();
  handoverWaitingEvents.reset();
  for (const row of rows) {
    if (row.waiting === 0 || !row.oldest) continue;
    const issuer = row.issuer_id ?? 'unknown';
    handoverOldestSeconds.set({ issuer }, Math.max(0, now.getTime() - row.oldest.getTime()) / 1000);
    handoverWaitingEvents.set({ issuer }, row.waiting);
  }
  handoverInFlight.set(rows.reduce((n, r) => n + r.in_flight, 0));
}
