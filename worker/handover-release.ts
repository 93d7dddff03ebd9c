// The end of a purchase's place under the hand-over bound (core/domain/handover-admission.ts).
// Its step marks the queue row processed in the step's own transaction; the place is given back
// here, once the workflow has gone idle: the lifecycle calls the `handover.idle` sink when it has
// nothing left to do, and the worker deletes the workflow's processed rows. Counting until then
// keeps the runs Temporal still has to close under the bound as well, not only the steps.
//
// When is that? A run that closes is done once the server has recorded its completion, and the
// SDK says so: it evicts a finished run from its cache (reason WORKFLOW_EXECUTION_ENDING) only
// after the server accepted the workflow task that completed it. A fixed delay after the sink
// cannot promise that on a saturated machine, where some completions reached the server hundreds
// of milliseconds after the sink (docs/decisions/0043-a-place-held-until-the-workflow-is-idle.md). A run
// that waits for its next event (a preview waiting for its settlement) stays open on purpose:
// its place is given back RELEASE_BATCH_MS after the sink, once the task that starts its wait
// has gone out. Whatever is never released (a worker that died, an eviction that never came) stops
// counting RELEASE_HOLD_MS after its step, and the sweep deletes its row (releaseStranded).
import type { EventEmitter } from 'node:events';
import type { InjectedSinks, Worker } from '@temporalio/worker';
import { coresdk } from '@temporalio/proto';
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import { hotQuery, type HotStatement } from '../prisma/hot';
import type { HandoverSinks } from '../workflows/lifecycle-signals';

/** A run that stays open: long enough for the task that starts its wait to leave the worker. */
export const RELEASE_BATCH_MS = 20;

/** A closing run's eviction is awaited this long, far beyond any server's answer to its completion. */
export const CLOSING_FORGOTTEN_MS = 5 * 60_000;

/** A release whose delete failed is tried this many times more, this long apart. */
const RELEASE_RETRIES = 3;
const RELEASE_RETRY_MS = 250;

const EXECUTION_ENDING = coresdk.workflow_activation.RemoveFromCache.EvictionReason.WORKFLOW_EXECUTION_ENDING;

// Through the admitted rows' partial index: a few dozen rows at most.
const RELEASE: HotStatement = {
  name: 'handover_release_v1',
  text: `DELETE FROM handover_pending p USING ingested_event e
          WHERE p.admitted_at IS NOT NULL AND p.processed_at IS NOT NULL
            AND e.id = p.event_id AND e.workflow_id = ANY($1::text[])`,
};

export interface HandoverRelease {
  sinks: InjectedSinks<HandoverSinks>;
  /** Follows the worker's evictions: a closing run gives its place back once its close is recorded. */
  attach(worker: Worker): Worker;
  /**
   * Gives back now what is waiting to be, and waits for the delete under way: a worker that has
   * stopped calls it before it closes its database pool, so the places of its last runs are
   * given back at once instead of failing against a closed pool and waiting for the sweep.
   */
  flush(): Promise<void>;
}

export function createHandoverRelease(deps: {
  db: Db;
  logger: Logger;
  /** Places were given back: the hand-over watch can admit at once instead of at its next turn. */
  onReleased?: () => void;
}): HandoverRelease {
  // Run id -> workflow id of the runs that said they were closing, until their eviction.
  const closing = new Map<string, string>();
  const deletes = batchedDeletes(deps);
  return {
    sinks: {
      handover: {
        idle: {
          fn(info, closes) {
            if (!closes) return deletes.soon(info.workflowId);
            closing.set(info.runId, info.workflowId);
            // The row stops counting RELEASE_HOLD_MS after its step, but it is deleted only here
            // or by the sweep: a busy server's answer may come seconds late, and is still awaited.
            // Forgotten only when no eviction comes at all (a worker shutting down).
            setTimeout(() => closing.delete(info.runId), CLOSING_FORGOTTEN_MS).unref();
          },
          // Once, live: a place whose release died with its worker is the sweep's to give back.
          callDuringReplay: false,
        },
      },
    },
    attach(worker) {
      onEviction(worker, (runId, reason) => {
        const workflowId = closing.get(runId);
        if (workflowId === undefined) return;
        closing.delete(runId);
        // Any eviction ends what this run was closing on. ENDING: the server recorded the close.
        // Another (a signal that came in as it completed, a task the server no longer knew, an
        // answer that never came): the run may have closed or may run on, and nothing tells
        // which; its processed rows are done either way, and an event that keeps it open holds
        // its own place. Waiting for an idle that may never come would leave the row to the sweep.
        if (reason !== EXECUTION_ENDING)
          deps.logger.debug({ runId, reason }, 'closing run evicted otherwise; released');
        deletes.now(workflowId);
      });
      return worker;
    },
    flush: () => deletes.flush(),
  };
}

/**
 * The deletes of processed rows, by workflow: one at a time, of what went idle since the last
 * (a batch), each RELEASE_BATCH_MS after the first idle of its batch or at once.
 */
function batchedDeletes(deps: { db: Db; logger: Logger; onReleased?: () => void }) {
  let batch = new Set<string>();
  // The delete under way, if any: what goes idle meanwhile is the next delete's batch.
  let deleting: Promise<void> | undefined;
  // A failed delete (a busy pool's connect time-out, a restarting database) is tried again a
  // few times: each lost release holds a place for RELEASE_HOLD_MS and a row until the sweep.
  const failures = failureCounts(RELEASE_RETRIES);
  let timer: NodeJS.Timeout | undefined;

  const release = (): Promise<void> => (deleting ??= deleteBatches().finally(() => (deleting = undefined)));
  const deleteBatches = async (): Promise<void> => {
    while (batch.size > 0) {
      const workflowIds = [...batch];
      batch = new Set();
      try {
        await hotQuery(deps.db, RELEASE, [workflowIds]);
        failures.forget(workflowIds);
        deps.onReleased?.();
      } catch (err) {
        deps.logger.warn({ err, workflows: workflowIds.length }, 'hand-over release failed; retrying');
        for (const id of failures.worthRetrying(workflowIds)) batch.add(id);
        if (batch.size > 0) setTimeout(() => void release(), RELEASE_RETRY_MS).unref();
        break;
      }
    }
  };
  return {
    soon(workflowId: string): void {
      batch.add(workflowId);
      timer ??= setTimeout(() => {
        timer = undefined;
        void release();
      }, RELEASE_BATCH_MS).unref();
    },
    now(workflowId: string): void {
      batch.add(workflowId);
      void release();
    },
    async flush(): Promise<void> {
      clearTimeout(timer);
      timer = undefined;
      await deleting;
      if (batch.size > 0) await release();
    },
  };
}

/** How often each workflow's release has failed: those under `retries` are worth another try. */
function failureCounts(retries: number) {
  const failed = new Map<string, number>();
  return {
    worthRetrying(workflowIds: string[]): string[] {
      return workflowIds.filter((id) => {
        const n = (failed.get(id) ?? 0) + 1;
        if (n > retries) failed.delete(id);
        else failed.set(id, n);
        return n <= retries;
      });
    },
    forget(workflowIds: string[]): void {
      for (const id of workflowIds) failed.delete(id);
    },
  };
}

interface Eviction {
  runId: string;
  evictJob: { reason?: number | null };
}

/**
 * The worker's evictions. The SDK keeps them on a protected emitter (its replay reads them); no
 * public hook reports a run's close as the server accepted it. Checked at start, so that an SDK
 * without it fails the worker's start instead of holding every place until RELEASE_HOLD_MS.
 */
function onEviction(worker: Worker, listener: (runId: string, reason: number | null | undefined) => void): void {
  const emitter = (worker as unknown as { evictionsEmitter?: EventEmitter }).evictionsEmitter;
  if (!emitter) throw new Error('@temporalio/worker no longer reports evictions: the hand-over release needs them');
  emitter.on('eviction', (e: Eviction) => listener(e.runId, e.evictJob.reason));
}

/**
 * The sink for a worker with no hand-over queue behind it: a replay (scripts/lib/replay.ts; it is
 * never called during replay) or a test's worker of stubbed activities. Registered, so that the
 * SDK has no unregistered sink to report.
 */
export const NO_HANDOVER_RELEASE: InjectedSinks<HandoverSinks> = {
  handover: { idle: { fn: () => undefined, callDuringReplay: false } },
};
