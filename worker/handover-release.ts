// The end of a purchase's place under the hand-over bound (core/domain/handover-admission.ts).
// Its step marks the queue row processed in the step's own transaction; the place is given back
// here, once the workflow has gone idle: the lifecycle calls the `handover.idle` sink when it has
// nothing left to do (it closes, or waits for the next event), and the worker deletes the
// workflow's processed rows. Counting until then keeps the runs Temporal still has to close
// under the bound as well, not only the steps still to commit.
//
// The delete waits a short batch window: one statement for every workflow gone idle meanwhile,
// and the workflow task that closes the run (sent once the sink returns) reaches the server
// before its place is taken again. A release lost with its worker is the sweep's to finish
// (releaseStranded), after the watch's grace; until then it stops counting RELEASE_HOLD_MS after
// its step (core/domain/handover-admission.ts).
import type { InjectedSinks } from '@temporalio/worker';
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import { hotQuery, type HotStatement } from '../prisma/hot';
import type { HandoverSinks } from '../workflows/lifecycle-signals';

/** Long enough for the run's closing workflow task to reach Temporal, short beside a step. */
export const RELEASE_BATCH_MS = 100;

// Through the admitted rows' partial index: a few dozen rows at most.
const RELEASE: HotStatement = {
  name: 'handover_release_v1',
  text: `DELETE FROM handover_pending p USING ingested_event e
          WHERE p.admitted_at IS NOT NULL AND p.processed_at IS NOT NULL
            AND e.id = p.event_id AND e.workflow_id = ANY($1::text[])`,
};

export interface HandoverRelease {
  sinks: InjectedSinks<HandoverSinks>;
  /** Deletes what is batched now (shutdown; tests). */
  flush(): Promise<void>;
}

export function createHandoverRelease(deps: {
  db: Db;
  logger: Logger;
  /** Places were given back: the hand-over watch can admit at once instead of at its next turn. */
  onReleased?: () => void;
}): HandoverRelease {
  let batch = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (batch.size === 0) return flushing;
    const workflowIds = [...batch];
    batch = new Set();
    flushing = flushing
      .then(() => hotQuery(deps.db, RELEASE, [workflowIds]))
      .then(() => deps.onReleased?.())
      // The places come back within RELEASE_HOLD_MS anyway, the rows through the sweep's net.
      .catch((err: unknown) => deps.logger.warn({ err, workflows: workflowIds.length }, 'hand-over release failed'));
    return flushing;
  };

  return {
    sinks: {
      handover: {
        idle: {
          fn(info) {
            batch.add(info.workflowId);
            timer ??= setTimeout(() => void flush(), RELEASE_BATCH_MS).unref();
          },
          // Once, live: a place whose release died with its worker is the sweep's to give back.
          callDuringReplay: false,
        },
      },
    },
    flush,
  };
}

/**
 * The sink for a worker with no hand-over queue behind it: a replay (scripts/lib/replay.ts; it is
 * never called during replay) or a test's worker of stubbed activities. Registered, so that the
 * SDK has no unregistered sink to report.
 */
export const NO_HANDOVER_RELEASE: InjectedSinks<HandoverSinks> = {
  handover: { idle: { fn: () => undefined, callDuringReplay: false } },
};
