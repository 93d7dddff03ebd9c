// The counters behind the rate limits (api/middleware/rate-limit.ts). One API process counts in
// its own memory. With API_PROCESSES > 1 the counts must be the host's, so they live in the
// cluster's primary and each process asks it over IPC; to keep that cheap, every check a
// process makes in one turn of its event loop travels in ONE message and comes back in one
// reply (under load a turn parses several requests at once). The primary applies the
// additions in order, so the counts are exactly those one shared counter would give: batching
// changes the number of messages, not the arithmetic. Measured (bench reads, 2 processes):
// one round trip per request cost about a fifth of the API's read throughput.
import cluster, { type Worker } from 'node:cluster';
import { RateLimiterMemory } from 'rate-limiter-flexible';

/** What a count answers: the points consumed in the key's window so far, this addition included. */
export interface Count {
  consumedPoints: number;
  msBeforeNext: number;
}

export interface Counter {
  consume(key: string, points: number): Promise<Count>;
}

const CHANNEL = 'rewards-rate-limit-v1';

/** One addition: the counter (its key prefix), the key, the points. */
type Addition = [prefix: string, key: string, points: number];
interface Request {
  channel: typeof CHANNEL;
  id: number;
  additions: Addition[];
}
interface Reply {
  channel: typeof CHANNEL;
  id: number;
  counts?: Array<[consumedPoints: number, msBeforeNext: number]>;
  error?: string;
}

// The libraries' own budget: never reached, so consume() always resolves with the count (the
// quota is compared by the caller, so an operator's override applies to the next request).
const UNREACHABLE_POINTS = Number.MAX_SAFE_INTEGER;

/** Fixed windows of `windowSeconds` per key, starting at the key's first addition (rate-limiter-flexible's memory store). */
export class WindowCounters {
  private readonly byPrefix = new Map<string, RateLimiterMemory>();

  constructor(private readonly windowSeconds: number) {}

  async add(prefix: string, key: string, points: number): Promise<Count> {
    let limiter = this.byPrefix.get(prefix);
    if (!limiter) {
      limiter = new RateLimiterMemory({ keyPrefix: prefix, points: UNREACHABLE_POINTS, duration: this.windowSeconds });
      this.byPrefix.set(prefix, limiter);
    }
    const res = await limiter.consume(key, points);
    return { consumedPoints: res.consumedPoints, msBeforeNext: res.msBeforeNext };
  }
}

/** This process's own counter (a single API process, tests). */
export function memoryCounter(counters: WindowCounters, prefix: string): Counter {
  return { consume: (key, points) => counters.add(prefix, key, points) };
}

export interface Link {
  send(message: Request): void;
  onMessage(listener: (message: unknown) => void): void;
}

/**
 * The counters of the primary, asked through `link` (a cluster worker's IPC channel). Checks
 * made before the event loop moves on are sent together; a reply that does not come within
 * `timeoutMs` fails its checks (the caller lets those requests through, logged).
 */
export class BatchingClusterCounters {
  private queued: Array<{ addition: Addition; resolve(count: Count): void; reject(err: Error): void }> = [];
  private readonly inFlight = new Map<number, { settle(reply: Reply): void; timer: NodeJS.Timeout }>();
  private nextId = 1;
  private flushScheduled = false;

  constructor(
    private readonly link: Link,
    private readonly timeoutMs: number,
  ) {
    link.onMessage((message) => {
      const reply = message as Partial<Reply>;
      if (reply?.channel !== CHANNEL || typeof reply.id !== 'number') return;
      this.inFlight.get(reply.id)?.settle(reply as Reply);
    });
  }

  counter(prefix: string): Counter {
    return {
      consume: (key, points) =>
        new Promise<Count>((resolve, reject) => {
          this.queued.push({ addition: [prefix, key, points], resolve, reject });
          if (!this.flushScheduled) {
            this.flushScheduled = true;
            // After this turn's I/O callbacks: the requests parsed in this turn join one message.
            setImmediate(() => this.flush());
          }
        }),
    };
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    const id = this.nextId++;
    const fail = (err: Error) => batch.forEach((b) => b.reject(err));
    const timer = setTimeout(() => {
      this.inFlight.delete(id);
      fail(new Error(`rate-limit counters: no reply from the primary within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
    timer.unref();
    this.inFlight.set(id, {
      timer,
      settle: (reply) => {
        clearTimeout(timer);
        this.inFlight.delete(id);
        if (!reply.counts || reply.counts.length !== batch.length) {
          fail(new Error(`rate-limit counters: ${reply.error ?? 'malformed reply'}`));
          return;
        }
        reply.counts.forEach(([consumedPoints, msBeforeNext], i) => batch[i].resolve({ consumedPoints, msBeforeNext }));
      },
    });
    try {
      this.link.send({ channel: CHANNEL, id, additions: batch.map((b) => b.addition) });
    } catch (err) {
      clearTimeout(timer);
      this.inFlight.delete(id);
      fail(err instanceof Error ? err : new Error(String(err)));
    }
  }
}

/** A cluster worker's IPC channel to its primary. */
export function workerLink(): Link {
  return {
    send: (message) => process.send!(message),
    onMessage: (listener) => process.on('message', listener),
  };
}

/** Answers a batch of additions, in order; what the primary runs for each request it receives. */
export async function answer(counters: WindowCounters, message: unknown): Promise<Reply | undefined> {
  const request = message as Partial<Request>;
  if (request?.channel !== CHANNEL || typeof request.id !== 'number' || !Array.isArray(request.additions)) return;
  try {
    const counts: Reply['counts'] = [];
    for (const [prefix, key, points] of request.additions) {
      const count = await counters.add(prefix, key, points);
      counts.push([count.consumedPoints, count.msBeforeNext]);
    }
    return { channel: CHANNEL, id: request.id, counts };
  } catch (err) {
    return { channel: CHANNEL, id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
}

/** In the cluster's primary, before forking: holds the counters every API process shares. */
export function serveClusterCounters(windowSeconds: number): void {
  const counters = new WindowCounters(windowSeconds);
  cluster.on('message', (worker: Worker, message: unknown) => {
    void answer(counters, message).then((reply) => {
      if (reply && worker.isConnected()) worker.send(reply);
    });
  });
}
