// What the worker's watches share (worker/handover-watch.ts, worker/ledger-watch.ts): a task run
// every so often, one turn at a time, and a warning that a failing task repeats at most so often.
// The next turn is scheduled once the last has settled, so a slow turn (a large sweep, a database
// that hangs) never overlaps the next one; stopping waits for the turn under way, up to a bound,
// so that the worker's shutdown never waits on a task that cannot finish.

export interface Periodic {
  stop(): Promise<void>;
  /** Runs the next turn now, or right after the one under way: there is work for it. */
  wake(): void;
}

export interface PeriodicOptions {
  /** Between the end of one turn and the start of the next. */
  intervalMs: number;
  /** Runs the first turn at once instead of after the first interval. */
  runAtStart?: boolean;
  /** How long stop() waits for the turn under way; without it, until it ends. */
  stopWaitMs?: number;
}

/**
 * Runs `task` every `intervalMs` until stopped; a task that returns a number waits that many
 * milliseconds instead before its next turn (a watch with work waiting comes back sooner). The
 * task reports its own errors (each watch knows what a failure means); one that escapes is
 * dropped, so it neither stops the loop nor becomes an unhandled rejection that ends the process.
 */
export function runPeriodically(task: () => Promise<void | number>, options: PeriodicOptions): Periodic {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let turn: Promise<void> = Promise.resolve();
  let running = false;
  let woken = false;
  const run = () => {
    running = true;
    woken = false;
    turn = task()
      .catch(() => undefined)
      .then((nextInMs) => {
        running = false;
        schedule(woken ? 0 : nextInMs);
      });
  };
  const schedule = (nextInMs?: number | void) => {
    if (!stopped) timer = setTimeout(run, typeof nextInMs === 'number' ? nextInMs : options.intervalMs);
  };
  if (options.runAtStart) run();
  else schedule();
  return {
    wake() {
      if (stopped) return;
      if (running) {
        woken = true;
        return;
      }
      clearTimeout(timer);
      run();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (options.stopWaitMs === undefined) return turn;
      let bound: NodeJS.Timeout | undefined;
      await Promise.race([turn, new Promise((resolve) => (bound = setTimeout(resolve, options.stopWaitMs)))]);
      clearTimeout(bound);
    },
  };
}

/**
 * `warn`, called at most once per `everyMs`: a task failing every turn while a dependency is
 * away says so once in a while, not every few seconds.
 */
export function throttled<T extends unknown[]>(everyMs: number, warn: (...args: T) => void): (...args: T) => void {
  let lastMs = -Infinity;
  return (...args) => {
    if (performance.now() - lastMs < everyMs) return;
    lastMs = performance.now();
    warn(...args);
  };
}
