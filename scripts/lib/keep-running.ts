// Keeps one process of the dev stack running: when it exits without being told to, it is
// started again after a pause that doubles with each quick failure, and each exit and restart
// is logged. The dev stack is one developer's machine with no orchestrator: a crashed API,
// worker, PostgreSQL or Temporal dev server should come back by itself, as a production
// orchestrator would bring back a crashed pod. Production processes stay plain processes.
import type { Logger } from '../../core/logger';

/** One run of a supervised process. */
export interface Running {
  /** Settles when the process exits, with how it exited. */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export interface Backoff {
  firstMs: number;
  maxMs: number;
  /** A run at least this long counts as healthy: the next pause starts again from firstMs. */
  stableAfterMs: number;
}

/** First pause 1 s, then 2, 4, ... at most 30 s; a minute of running resets it. */
export const RESTART_BACKOFF: Backoff = { firstMs: 1_000, maxMs: 30_000, stableAfterMs: 60_000 };

export interface KeptRunning {
  /** Stops the current run and any restart; resolves when the process has exited. */
  stop(): Promise<void>;
  /** How many times it was restarted (tests, the stack's log). */
  readonly restarts: number;
}

export function keepRunning(
  name: string,
  first: Running,
  start: () => Promise<Running>,
  logger: Logger,
  backoff: Backoff = RESTART_BACKOFF,
): KeptRunning {
  let current = first;
  let stopping = false;
  let restarts = 0;
  let delayMs = backoff.firstMs;
  let starting: Promise<Running> | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(done, ms);
      wake = () => (clearTimeout(timer), done());
    });

  // Runs for the life of the stack; each turn waits for an exit, so restarts are bounded in
  // rate by the backoff, never by a count that would leave the stack half up.
  const watch = async () => {
    for (;;) {
      const startedAt = Date.now();
      const how = await current.exited;
      if (stopping) return;
      if (Date.now() - startedAt >= backoff.stableAfterMs) delayMs = backoff.firstMs;
      logger.error({ process: name, exit: how, restartInMs: delayMs }, 'a service process exited; restarting it');
      await pause(delayMs);
      delayMs = Math.min(delayMs * 2, backoff.maxMs);
      if (stopping) return;
      starting = start().then(
        (run) => {
          restarts += 1;
          logger.info({ process: name, restarts }, 'restarted');
          return run;
        },
        (err: unknown) => failedStart(err),
      );
      current = await starting;
      starting = undefined;
    }
  };
  void watch();

  return {
    get restarts() {
      return restarts;
    },
    async stop() {
      stopping = true;
      wake?.();
      // A start under way finishes first, so that what it started is stopped too.
      if (starting) current = await starting;
      await current.stop();
    },
  };
}

/** A start that failed: an exit at once, so the loop pauses and tries again. */
function failedStart(err: unknown): Running {
  const message = err instanceof Error ? err.message : String(err);
  return { exited: Promise.resolve(`failed to start: ${message}`), stop: async () => undefined };
}
