// Starts, every minute, the enrolment runs nobody else starts (core/domain/enrolment-runs.ts):
// a targeted offer whose start has come since it was written (created to start later, or
// imported) gets its run, and a processing run whose workflow an API process never started gets
// it once the turn before saw it so. Each worker runs it; two that find the same offer open one
// run (one processing run per offer), and the other is told the workflow exists.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import type { WorkflowEngine } from '../core/workflow-engine';
import { startDueEnrolmentRuns } from '../core/domain/enrolment-runs';
import { runPeriodically, throttled, type Periodic } from './periodic';

export const ENROLMENT_RUN_WATCH_INTERVAL_MS = 60_000;

/** A failing turn (the database or Temporal away) is logged at most this often. */
const WARN_EVERY_MS = 5 * 60_000;

export function startEnrolmentRunWatch(
  deps: { db: Db; temporal: WorkflowEngine; logger: Logger; clock: { now(): Date } },
  intervalMs = ENROLMENT_RUN_WATCH_INTERVAL_MS,
): Periodic {
  const warn = throttled(WARN_EVERY_MS, (err: unknown) =>
    deps.logger.warn({ err }, 'could not start the enrolment runs of targeted offers; retrying'),
  );
  let seen: ReadonlySet<string> = new Set();
  const turn = async () => {
    try {
      const started = await startDueEnrolmentRuns(deps.db, deps.temporal, deps.clock.now(), seen);
      seen = started.seen;
      if (started.opened.length > 0) deps.logger.info({ runs: started.opened }, 'enrolment runs started');
      if (started.restarted.length > 0)
        deps.logger.warn(
          { runs: started.restarted },
          'started enrolment runs their API process left without a workflow',
        );
    } catch (err) {
      warn(err);
    }
  };
  return runPeriodically(turn, { intervalMs, runAtStart: true });
}
