// The worker process's stop bounds (worker/main.ts), shared with npm start's supervisor, which
// waits for the worker a little longer than this before it kills it.

/** Cancelled activities that do not end within this after the grace are abandoned (run() rejects). */
export const FORCE_AFTER_GRACE_MS = 5_000;

/**
 * The webhook relay's first attempts in flight: each bounded by its 10 s time-out; what a late
 * stop leaves claimed is claimed again by the next relay when its claim expires.
 */
export const RELAY_STOP_MS = 15_000;

/** Closing the database pool and the Temporal connections. */
const CLOSE_MS = 2_000;

/** The longest the worker takes to stop after SIGTERM: activities and relay drain side by side. */
export function workerShutdownBoundMs(graceMs: number): number {
  return Math.max(graceMs + FORCE_AFTER_GRACE_MS, RELAY_STOP_MS) + CLOSE_MS;
}
