// Runs hand-overs after the response, so accepting events costs one database commit and
// never waits on Temporal (DESIGN.md, quality bars). First the events just stored are admitted
// (core/domain/handover-admission.ts): those there is room for, and whose issuer has nothing
// older waiting, in one short transaction for everything the process has queued meanwhile; the
// others wait in the database for the workers' hand-over watch, except those that found an older
// event of their issuer waiting: concurrent requests of one issuer reach the admission in another
// order than they were stored, so those are tried again a few times, shortly, behind the older
// ones' own admission (without it, they would wait for the watch's next probe, and in a
// deployment without workers for ever). Then the admitted are signalled
// in chunks, a bounded number in flight. Bounded memory: a capped backlog; whatever is dropped
// or fails stays in the database, where the watch and the sweeper find it. Small chunks keep the
// work lost to a crash small: at most the chunks in flight are admitted but not signalled, and
// the watch hands those over again.
import type { Logger } from '../../core/logger';
import { handOver, type HandoverItem } from '../../core/domain/handover';
import { admitStored, type StoredAdmission } from '../../core/domain/handover-admission';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';

export interface Handover {
  enqueue(items: HandoverItem[]): void;
  drain(): Promise<void>;
}

/** Signals items; returns those Temporal refused. */
export type HandOverFn = (items: HandoverItem[]) => Promise<{ failed: Array<{ eventId: string; error: string }> }>;
/** Admits what may be handed over now, of the given event ids; absent, everything is. */
export type AdmitFn = (eventIds: string[]) => Promise<StoredAdmission>;

/** Events admitted by one transaction at most: one statement's arrays stay small. */
const ADMIT_BATCH = 500;

/**
 * An event left behind an older one of its issuer is tried again after 25, 50, 100 and 200 ms:
 * far more than an admission takes, even on a loaded machine. Past that, the older event is
 * not on its way (a backlog, an API that died): the watch admits them in order.
 */
const BEHIND_OLDER_RETRY_MS = [25, 50, 100, 200];

/** The API's hand-over: admitted under HANDOVER_MAX_IN_FLIGHT, then signalled. */
export function createApiHandover(
  deps: { db: Db; temporal: WorkflowEngine; clock?: { now(): Date } },
  logger: Logger,
  maxInFlight: number,
): Handover {
  const clock = deps.clock ?? { now: () => new Date() };
  return createHandoverQueue((items) => handOver(deps, items), logger, {
    admit: (eventIds) => admitStored(deps.db, eventIds, { maxInFlight, now: clock.now() }),
  });
}

export function createHandoverQueue(
  signal: HandOverFn,
  logger: Logger,
  options: { admit?: AdmitFn; concurrency?: number; maxBacklog?: number; chunkSize?: number } = {},
): Handover {
  const concurrency = options.concurrency ?? 4;
  const maxBacklog = options.maxBacklog ?? 50_000;
  const chunkSize = options.chunkSize ?? 16;
  // Stored here, not yet through admission; then admitted, waiting for a signalling slot.
  const backlog: HandoverItem[] = [];
  const admitted: HandoverItem[] = [];
  let admitting = false;
  let running = 0;
  let idle: Array<() => void> = [];
  const dropped = droppedWarning(logger);
  // Ahead of newer arrivals, which would otherwise find these waiting and stay behind them.
  const behindOlder = behindOlderRetries((items) => {
    backlog.unshift(...items);
    pump();
  });

  const busy = () => running > 0 || admitting || behindOlder.waiting > 0 || backlog.length > 0 || admitted.length > 0;
  const settle = () => {
    if (busy()) return;
    const waiting = idle;
    idle = [];
    waiting.forEach((resolve) => resolve());
  };

  const admitNext = () => {
    if (admitting || backlog.length === 0) return;
    const batch = backlog.splice(0, ADMIT_BATCH);
    if (!options.admit) {
      admitted.push(...batch);
      return;
    }
    admitting = true;
    options
      .admit(batch.map((item) => item.eventId))
      .then((result) => {
        admitted.push(...batch.filter((item) => result.admitted.has(item.eventId)));
        behindOlder.retry(batch, new Set(result.behindOlder));
      })
      .catch((err) => {
        behindOlder.retry(batch, new Set());
        logger.warn({ err, events: batch.length }, 'admission failed; the hand-over watch will retry');
      })
      .finally(() => {
        admitting = false;
        pump();
      });
  };

  const pump = () => {
    admitNext();
    while (running < concurrency && admitted.length > 0) {
      const chunk = admitted.splice(0, chunkSize);
      running++;
      void reportFailures(logger, signal(chunk), chunk.length).finally(() => {
        running--;
        pump();
      });
    }
    settle();
  };

  return {
    enqueue(items) {
      const room = maxBacklog - backlog.length - admitted.length;
      if (items.length > room) dropped(items.length - Math.max(room, 0), backlog.length);
      backlog.push(...items.slice(0, Math.max(room, 0)));
      pump();
    },
    drain() {
      if (!busy()) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}

/** Logs what a chunk's signals could not hand over: it stays queued, for the watch. */
function reportFailures(logger: Logger, signalled: ReturnType<HandOverFn>, events: number): Promise<void> {
  return signalled.then(
    ({ failed }) => {
      if (failed.length > 0)
        logger.warn({ failed: failed.length, first: failed[0] }, 'hand-over failed; the hand-over watch will retry');
    },
    (err) => logger.warn({ err, events }, 'hand-over failed; the hand-over watch will retry'),
  );
}

/**
 * The events of a batch its admission left behind an older one of their issuer, put back
 * (`requeue`) after the next of BEHIND_OLDER_RETRY_MS; after the last, the watch's. `waiting`
 * counts the retries whose time has not come, which a drain waits for.
 */
function behindOlderRetries(requeue: (items: HandoverItem[]) => void) {
  const tries = new Map<string, number>();
  let waiting = 0;
  return {
    get waiting() {
      return waiting;
    },
    retry(batch: HandoverItem[], behind: Set<string>) {
      const byDelay = new Map<number, HandoverItem[]>();
      for (const item of batch) {
        const done = tries.get(item.eventId) ?? 0;
        if (!behind.has(item.eventId) || done >= BEHIND_OLDER_RETRY_MS.length) {
          tries.delete(item.eventId);
          continue;
        }
        tries.set(item.eventId, done + 1);
        const delayMs = BEHIND_OLDER_RETRY_MS[done];
        const items = byDelay.get(delayMs) ?? [];
        items.push(item);
        byDelay.set(delayMs, items);
      }
      for (const [delayMs, items] of byDelay) {
        waiting++;
        setTimeout(() => {
          waiting--;
          requeue(items);
        }, delayMs);
      }
    },
  };
}

/** A full backlog drops events on every request: one warning per 10 s, with the count. */
function droppedWarning(logger: Logger): (events: number, backlog: number) => void {
  let dropped = 0;
  let lastWarnMs = -Infinity;
  return (events, backlog) => {
    dropped += events;
    if (performance.now() - lastWarnMs < 10_000) return;
    logger.warn({ dropped, backlog }, 'hand-over backlog full; the hand-over watch will pick these up');
    lastWarnMs = performance.now();
    dropped = 0;
  };
}
