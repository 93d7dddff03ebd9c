// Sends the cluster test's batches at a steady pace, alternating between the APIs that are
// still up, as an issuer's integration behind a load balancer would: a batch whose API dies
// under it (connection refused or reset) goes to another API, a 429 waits as Retry-After says.
// Re-sending a batch is safe, since an event already stored answers as accepted (ingestion is
// idempotent per issuer, kind and id). Every retry is bounded.
import type { ServiceChild } from '../../scripts/cluster/cluster';

export interface SendResult {
  /** Batches answered 204 by each API (by name), first answers only. */
  acceptedBy: Record<string, number>;
  resent: number;
  rateLimited: number;
  seconds: number;
}

export interface SendOptions {
  apis: ServiceChild[];
  token: string;
  batches: unknown[][];
  /** Batches offered per second, all APIs together. */
  batchesPerSecond: number;
  /** Called after each batch is accepted; the test kills processes from here. */
  afterAccepted?: (batch: number, api: ServiceChild) => Promise<void> | void;
}

const MAX_ATTEMPTS = 20;

export async function sendBatches(options: SendOptions): Promise<SendResult> {
  const result: SendResult = { acceptedBy: {}, resent: 0, rateLimited: 0, seconds: 0 };
  const started = performance.now();
  const intervalMs = 1000 / options.batchesPerSecond;
  for (let b = 0; b < options.batches.length; b++) {
    const dueAt = started + b * intervalMs;
    const wait = dueAt - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const api = await sendOne(options, b, result);
    result.acceptedBy[api.name] = (result.acceptedBy[api.name] ?? 0) + 1;
    await options.afterAccepted?.(b, api);
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

async function sendOne(options: SendOptions, b: number, result: SendResult): Promise<ServiceChild> {
  const body = JSON.stringify(options.batches[b]);
  let lastProblem = '';
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const alive = options.apis.filter((a) => a.child.exitCode === null && a.child.signalCode === null);
    if (alive.length === 0) throw new Error('no API process is left');
    const api = alive[(b + attempt) % alive.length];
    if (attempt > 0) result.resent++;
    let res: Response;
    try {
      res = await fetch(`${api.url}/api/v1/incoming-txn`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      // The API died under the request (or just before it): another one takes the batch.
      lastProblem = `${api.name}: ${String((err as Error).cause ?? err)}`;
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const text = await res.text();
    if (res.status === 204) return api;
    if (res.status === 429) {
      result.rateLimited++;
      const seconds = Number(res.headers.get('retry-after') ?? 1);
      await new Promise((r) => setTimeout(r, Math.min(Math.max(seconds, 0.1), 10) * 1000));
      continue;
    }
    if (res.status >= 500) {
      lastProblem = `${api.name}: HTTP ${res.status} ${text.slice(0, 200)}`;
      await new Promise((r) => setTimeout(r, 1000));
      continue;
    }
    // 200 (some refused) or 400 (all refused) means a test bug: every event is valid.
    throw new Error(`batch ${b} answered ${res.status} by ${api.name}: ${text.slice(0, 500)}`);
  }
  throw new Error(`batch ${b} not accepted after ${MAX_ATTEMPTS} attempts: ${lastProblem}`);
}
