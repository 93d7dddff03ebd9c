// Phase: overload. Settled purchases offered at a steady rate above what the lifecycle sustains
// (by default twice the sustained rate measured earlier in the same run) for a few minutes, as a
// Black Friday or a processor re-sending a day of files would. Measured: the rate at which
// purchases complete while the load lasts (after its first fifth, the ramp), the rate at which
// the backlog left at its end drains, and, from the purchases' workflows and events afterwards,
// how many were in flight at once (handed to Temporal and not yet processed: from the start of
// the workflow to its step's processing time) and how many workflows ran at once (start to
// close). With admission at the hand-over the first is at most HANDOVER_MAX_IN_FLIGHT
// (docs/decisions/0037-admission-at-the-hand-over.md); without it, everything accepted is.
import http from 'node:http';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { send, percentile } from './load';
import { purchase, type Fixture } from './fixtures';
import type { Receiver } from './receiver';
import { maxOverlap } from './intervals';
import { cpuBetween, cpuSnapshot, machineCpuSeconds, type CpuGroup, type CpuSnapshot } from './cpu';

export interface OverloadResult {
  /** Events offered per second, and for how long. */
  offeredPerSecond: number;
  seconds: number;
  offered: number;
  /** Requests the API did not answer 204 (a 429 backlog_full among them). */
  errors: number;
  /** Purchases completed per second from the end of the ramp to the end of the load. */
  duringPerSecond: number;
  /** Events accepted but not completed when the load ended, and how fast they then drained (to 90 %). */
  backlog: number;
  drainPerSecond: number;
  drainSeconds: number;
  completed: number;
  /** Ingestion (POST start) to webhook, over every completed purchase. */
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** The most purchases in flight at once (workflow start to step processed), and workflows running at once. */
  inFlightMax: number;
  runningMax: number;
  workflows: number;
  /** Where the CPU went while the load lasted (after its ramp) and while its backlog drained (to 90 %). */
  cpu: { during: OverloadCpu; drain: OverloadCpu };
}

/** One window's CPU (bench/cpu.ts) and the purchases completed in it. */
export interface OverloadCpu {
  seconds: number;
  completed: number;
  machineCpuSeconds: number;
  cpuSeconds: Record<CpuGroup, number>;
}

interface CpuReading {
  atMs: number;
  completed: number;
  machine: number;
  groups: CpuSnapshot;
}

function cpuWindow(from: CpuReading, to: CpuReading): OverloadCpu {
  return {
    seconds: (to.atMs - from.atMs) / 1000,
    completed: to.completed - from.completed,
    machineCpuSeconds: to.machine - from.machine,
    cpuSeconds: cpuBetween(from.groups, to.groups),
  };
}

export async function runOverload(options: {
  apiUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  fixture: Fixture;
  receiver: Receiver;
  ratePerSecond: number;
  seconds: number;
  drainTimeoutMs: number;
  runId: string;
  /** The API's and the worker's process, and the bench's: CPU by group (bench/cpu.ts). */
  roots: { api: number; worker: number; bench: number };
  log: (line: string) => void;
}): Promise<OverloadResult> {
  const prefix = `ovl-${options.runId}-`;
  const sentAt = new Map<string, number>();
  const completions: number[] = [];
  const latencies: number[] = [];
  options.receiver.onWebhook = (a) => {
    if (!a.externalId.startsWith(prefix)) return;
    completions.push(a.atMs);
    const t0 = sentAt.get(a.externalId);
    if (t0 !== undefined) latencies.push(a.atMs - t0);
  };
  const reading = (): CpuReading => ({
    atMs: performance.now(),
    completed: completions.length,
    machine: machineCpuSeconds(),
    groups: cpuSnapshot(options.roots),
  });
  let rampEnd: CpuReading | undefined;
  const rampTimer = setTimeout(() => (rampEnd = reading()), (options.seconds * 1000) / 5);
  const { offered, errors, startMs, endMs } = await offer(options, prefix, sentAt);
  clearTimeout(rampTimer);
  const loadEnd = reading();
  const accepted = offered - errors.events;
  options.log(`overload: offered ${offered} in ${((endMs - startMs) / 1000).toFixed(0)} s; draining`);
  const backlog = accepted - completions.length;
  const deadline = performance.now() + options.drainTimeoutMs;
  let drained90: CpuReading | undefined;
  while (completions.length < accepted && performance.now() < deadline) {
    if (!drained90 && completions.length - loadEnd.completed >= Math.ceil(backlog * 0.9)) drained90 = reading();
    await new Promise((r) => setTimeout(r, 200));
  }
  drained90 ??= reading();
  options.receiver.onWebhook = () => undefined;

  const rampEndMs = startMs + (endMs - startMs) / 5;
  const during = completions.filter((t) => t >= rampEndMs && t < endMs).length;
  // The drain's steady rate: up to 90 % of what was left, so that a straggler does not decide it.
  const drained = completions.filter((t) => t >= endMs).sort((a, b) => a - b);
  const ninety = drained[Math.max(0, Math.ceil(backlog * 0.9) - 1)];
  const drainSeconds = ninety !== undefined && backlog > 0 ? (ninety - endMs) / 1000 : NaN;
  const concurrency = await workflowConcurrency(options, prefix);
  return {
    offeredPerSecond: options.ratePerSecond,
    seconds: (endMs - startMs) / 1000,
    offered,
    errors: errors.requests,
    duringPerSecond: (during * 1000) / (endMs - rampEndMs),
    backlog,
    drainPerSecond: backlog > 0 ? Math.ceil(backlog * 0.9) / drainSeconds : NaN,
    drainSeconds,
    completed: completions.length,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    ...concurrency,
    cpu: { during: cpuWindow(rampEnd ?? loadEnd, loadEnd), drain: cpuWindow(loadEnd, drained90) },
  };
}

/** Open loop: every 100 ms a batch of rate/10 events (the fraction carried over), whatever the answers do. */
async function offer(
  options: { apiUrl: string; fixture: Fixture; ratePerSecond: number; seconds: number },
  prefix: string,
  sentAt: Map<string, number>,
) {
  const url = new URL(options.apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const headers = { authorization: `Bearer ${options.fixture.token}` };
  const errors = { requests: 0, events: 0 };
  const posts: Array<Promise<void>> = [];
  const startMs = performance.now();
  let offered = 0;
  for (let tick = 0; tick < options.seconds * 10; tick++) {
    const wait = startMs + tick * 100 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const due = Math.floor(((tick + 1) * options.ratePerSecond) / 10) - offered;
    if (due <= 0) continue;
    const events = Array.from({ length: due }, (_, i) =>
      purchase(options.fixture, `${prefix}${offered + i}`, offered + i),
    );
    const now = performance.now();
    for (const e of events) sentAt.set(e.id, now);
    offered += due;
    posts.push(
      send(agent, url, { method: 'POST', path: '/api/v1/incoming-txn', headers, body: JSON.stringify(events) }).then(
        (status) => {
          if (status === 204) return;
          errors.requests++;
          errors.events += due;
        },
        () => {
          errors.requests++;
          errors.events += due;
        },
      ),
    );
  }
  const endMs = performance.now();
  await Promise.all(posts);
  agent.destroy();
  return { offered, errors, startMs, endMs };
}

/**
 * The phase's purchases at their busiest: each workflow's start and close (Temporal's clock)
 * and its event's processing time (the step's workflow time, just before its commit), read once
 * everything has drained. Both clocks are this machine's.
 */
async function workflowConcurrency(
  options: { databaseUrl: string; temporalAddress: string; fixture: Fixture },
  prefix: string,
): Promise<{ inFlightMax: number; runningMax: number; workflows: number }> {
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  const connection = await Connection.connect({ address: options.temporalAddress });
  try {
    const { rows } = await db.query<{ workflow_id: string; processed_at: Date | null }>(
      `SELECT workflow_id, processed_at FROM ingested_event WHERE issuer_id = $1 AND external_id LIKE $2`,
      [options.fixture.issuerId, `${prefix}%`],
    );
    const processedAt = new Map(rows.map((r) => [r.workflow_id, r.processed_at?.getTime()]));
    const client = new Client({ connection });
    const inFlight: Array<[number, number]> = [];
    const running: Array<[number, number]> = [];
    const query = `WorkflowId STARTS_WITH "txn/${options.fixture.issuerId}/${prefix}"`;
    for await (const wf of client.workflow.list({ query })) {
      const start = wf.startTime.getTime();
      const processed = processedAt.get(wf.workflowId);
      if (processed !== undefined) inFlight.push([start, Math.max(start, processed)]);
      if (wf.closeTime) running.push([start, wf.closeTime.getTime()]);
    }
    return { inFlightMax: maxOverlap(inFlight), runningMax: maxOverlap(running), workflows: running.length };
  } finally {
    await connection.close();
    await db.end();
  }
}
