// Runs hand-overs after the response, so accepting events costs one database commit and
// never waits on Temporal (DESIGN.md, quality bars). Bounded: a fixed number of chunks in
// flight (each signals its events a few at a time, then marks them in one statement) and a
// capped backlog; whatever is dropped or fails stays un-handed in the database, where the
// sweeper finds it. Small chunks keep the work lost to a crash small: at most the chunks in
// flight are signalled but not marked, and the sweeper skips those already processed.
import type { Logger } from '../../core/logger';
import type { HandoverItem } from '../../core/domain/handover';

export interface Handover {
  enqueue(items: HandoverItem[]): void;
  drain(): Promise<void>;
}

export function createHandoverQueue(
  handOver: (items: HandoverItem[]) => Promise<{ failed: Array<{ eventId: string; error: string }> }>,
  logger: Logger,
  options: { concurrency?: number; maxBacklog?: number; chunkSize?: number } = {},
): Handover {
  const concurrency = options.concurrency ?? 4;
  const maxBacklog = options.maxBacklog ?? 50_000;
  const chunkSize = options.chunkSize ?? 16;
  const backlog: HandoverItem[] = [];
  let running = 0;
  let idle: Array<() => void> = [];
  // A full backlog drops events on every request: one warning per 10 s, with the count.
  let dropped = 0;
  let lastWarnMs = -Infinity;

  const pump = () => {
    while (running < concurrency && backlog.length > 0) {
      const chunk = backlog.splice(0, chunkSize);
      running++;
      handOver(chunk)
        .then(({ failed }) => {
          if (failed.length > 0)
            logger.warn({ failed: failed.length, first: failed[0] }, 'hand-over failed; the sweeper will retry');
        })
        .catch((err) => logger.warn({ err, events: chunk.length }, 'hand-over failed; the sweeper will retry'))
        .finally(() => {
          running--;
          pump();
          if (running === 0 && backlog.length === 0) {
            const waiting = idle;
            idle = [];
            waiting.forEach((resolve) => resolve());
          }
        });
    }
  };

  return {
    enqueue(items) {
      const room = maxBacklog - backlog.length;
      if (items.length > room) {
        dropped += items.length - Math.max(room, 0);
        if (performance.now() - lastWarnMs >= 10_000) {
          logger.warn({ dropped, backlog: backlog.length }, 'hand-over backlog full; the sweeper will pick these up');
          lastWarnMs = performance.now();
          dropped = 0;
        }
      }
      backlog.push(...items.slice(0, Math.max(room, 0)));
      pump();
    },
    drain() {
      if (running === 0 && backlog.length === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },
  };
}
