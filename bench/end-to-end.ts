// Phase: end to end at a steady arrival rate (open loop: one settled event every 1/rate s,
// whatever the answers do). Per event: from the start of its POST to the arrival of its
// qualified_settlement webhook at the local receiver, through hand-over, lifecycle,
// ledger posting and the delivery workflow.
import { send } from './load';
import { purchase, type Fixture } from './fixtures';
import { percentile } from './load';
import type { Receiver } from './receiver';
import { stageLatencies, type Stage, type StageLatency } from './e2e-stages';

export interface EndToEndResult {
  sent: number;
  received: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  errors: number;
  /** Where the time went, p50 and p99 of each stage (bench/e2e-stages.ts); with a database only. */
  stages?: Record<Stage, StageLatency>;
}

export async function runEndToEnd(options: {
  apiUrl: string;
  fixture: Fixture;
  receiver: Receiver;
  seconds: number;
  rate: number;
  runId: string;
  drainTimeoutMs: number;
  /** The stack's database: the stages of each purchase are read from its rows. */
  databaseUrl?: string;
}): Promise<EndToEndResult> {
  const url = new URL(options.apiUrl);
  const sentAt = new Map<string, number>();
  const sentAtEpoch = new Map<string, number>();
  const arrivedAtEpoch = new Map<string, number>();
  const latencies: number[] = [];
  options.receiver.onWebhook = (a) => {
    const t0 = sentAt.get(a.externalId);
    if (t0 === undefined) return;
    latencies.push(a.atMs - t0);
    arrivedAtEpoch.set(a.externalId, a.atEpochMs);
  };
  const total = Math.round(options.seconds * options.rate);
  const intervalMs = 1000 / options.rate;
  const headers = { authorization: `Bearer ${options.fixture.token}` };
  let errors = 0;
  const posts: Array<Promise<void>> = [];
  const start = performance.now();
  for (let n = 0; n < total; n++) {
    const wait = start + n * intervalMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const externalId = `e2e-${options.runId}-${n}`;
    sentAt.set(externalId, performance.now());
    sentAtEpoch.set(externalId, Date.now());
    const body = JSON.stringify(purchase(options.fixture, externalId, n));
    posts.push(
      send(undefined, url, { method: 'POST', path: '/api/v1/incoming-txn', headers, body }).then(
        (status) => void (status === 204 || errors++),
        () => void errors++,
      ),
    );
  }
  await Promise.all(posts);
  // Stragglers: a bounded wait for the last webhooks, so that the next phase starts on a
  // quiet system (when arrivals outrun the lifecycle, this wait is the backlog draining).
  const deadline = performance.now() + options.drainTimeoutMs;
  while (latencies.length < total - errors && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  options.receiver.onWebhook = () => undefined;
  const prefix = `e2e-${options.runId}-`;
  const stages = options.databaseUrl
    ? await stageLatencies(options.databaseUrl, options.fixture.issuerId, prefix, sentAtEpoch, arrivedAtEpoch)
    : undefined;
  return {
    stages,
    sent: total,
    received: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: Math.max(...latencies),
    errors,
  };
}
