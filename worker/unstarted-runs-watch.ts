// Starts, every minute, the workflows an API process wrote the row for and died before starting:
// an open claim, a processing payout or statement run with no run behind it, once the turn before
// saw it so too (core/domain/run-starts.ts). Without it such a row would wait forever and block
// the next claim of its transaction, or the next run. It also starts the run of a claim in review
// left without one by a restore, walking the review queue a page a turn, so that an operator's
// decision can reach it. Each worker runs it; two that find the same row start it once, the other
// is told it exists.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import type { WorkflowEngine } from '../core/workflow-engine';
import { startUnstartedRuns, type UnstartedRunsTurn } from '../core/domain/run-starts';
import { runPeriodically, throttled, type Periodic } from './periodic';

export const UNSTARTED_RUNS_INTERVAL_MS = 60_000;

/** A failing turn (the database or Temporal away) is logged at most this often. */
const WARN_EVERY_MS = 5 * 60_000;

export function startUnstartedRunsWatch(
  deps: { db: Db; temporal: WorkflowEngine; logger: Logger },
  intervalMs = UNSTARTED_RUNS_INTERVAL_MS,
): Periodic {
  const warn = throttled(WARN_EVERY_MS, (err: unknown) =>
    deps.logger.warn({ err }, 'could not start the workflows of rows left without one; retrying'),
  );
  let previous: UnstartedRunsTurn = { seen: new Set(), reviewsAfter: null };
  const turn = async () => {
    try {
      const { started, ...next } = await startUnstartedRuns(deps.db, deps.temporal, previous);
      previous = next;
      const { claimsInReview, ...ofDeadApis } = started;
      if (Object.values(ofDeadApis).some((ids) => ids.length > 0))
        deps.logger.warn(ofDeadApis, 'started the workflows of rows their API process left without one');
      // A restore's doing (docs/operating/runbook.md, "Claims waiting for review"), not an API's.
      if (claimsInReview.length > 0)
        deps.logger.warn({ claimsInReview }, 'started the runs of claims in review that had none');
    } catch (err) {
      warn(err);
    }
  };
  return runPeriodically(turn, { intervalMs, runAtStart: true });
}
