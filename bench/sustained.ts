// Phase: sustained throughput. A backlog of settled events is offered at once; the rate at
// which purchases complete (qualified_settlement webhook received) is measured between 10%
// and 90% of the backlog, leaving out ramp-up and tail. The floor is the same measurement of
// the cheapest possible purchase (bench/floor-workflows.ts) handed over by the API's own
// hand-over queue with the same signalWithStart, on the same Temporal server. Finally the
// drain check: every accepted event of the backlog ends processed (no reward_status
// 'pending') and the ledger's trial balance is zero.
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { createHandoverQueue } from '../api/ingestion/handover-queue';
import { HANDOVER_CONCURRENCY, startAttributes } from '../core/domain/handover';
import { mapLimited } from '../core/concurrency';
import { createLogger } from '../core/logger';
import { FLOOR_WORKFLOW_TYPE } from './floor-workflows';
import { closedLoop } from './load';
import { purchase, type Fixture } from './fixtures';
import type { Receiver } from './receiver';

export interface DrainResult {
  offered: number;
  completed: number;
  /** Completions per second between 10% and 90% of the backlog. */
  steadyPerSecond: number;
  /** Backlog size over the time from the first offer to the last completion. */
  overallPerSecond: number;
  seconds: number;
}

/** Counts completions against time and computes the steady rate; bounded by timeoutMs. */
async function measureDrain(
  offered: number,
  timeoutMs: number,
  offer: () => Promise<void>,
  completed: () => number,
): Promise<DrainResult> {
  const samples: Array<{ t: number; n: number }> = [];
  const start = performance.now();
  const offering = offer();
  const base = completed();
  for (;;) {
    const n = completed() - base;
    samples.push({ t: performance.now(), n });
    if (n >= offered || performance.now() - start > timeoutMs) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await offering;
  const at = (fraction: number) => samples.find((s) => s.n >= fraction * offered);
  const s10 = at(0.1);
  const last = samples[samples.length - 1];
  // A backlog that did not reach 90% in time is measured up to its last sample.
  const s90 = at(0.9) ?? last;
  return {
    offered,
    completed: last.n,
    steadyPerSecond: s10 && s90 && s90.t > s10.t ? ((s90.n - s10.n) * 1000) / (s90.t - s10.t) : NaN,
    overallPerSecond: (last.n * 1000) / (last.t - start),
    seconds: (last.t - start) / 1000,
  };
}

export async function runLifecycleDrain(options: {
  apiUrl: string;
  fixture: Fixture;
  receiver: Receiver;
  backlog: number;
  timeoutMs: number;
  runId: string;
  onTransaction: (chgId: string, txnId: string) => void;
}): Promise<DrainResult> {
  let done = 0;
  const prefix = `sus-${options.runId}-`;
  options.receiver.onWebhook = (a) => {
    if (!a.externalId.startsWith(prefix)) return;
    done++;
    options.onTransaction(a.chgId, a.transactionId);
  };
  const batch = 100;
  const batches = Math.ceil(options.backlog / batch);
  const headers = { authorization: `Bearer ${options.fixture.token}` };
  let next = 0;
  const offer = async () => {
    // The backlog goes in as fast as the API takes it: 8 clients, batches of 100.
    const r = await closedLoop({
      baseUrl: options.apiUrl,
      connections: 8,
      durationMs: 60_000,
      expectStatus: 204,
      next: () => {
        const b = next++;
        if (b >= batches) return { method: 'GET', path: '/healthz' };
        const events = Array.from({ length: batch }, (_, i) =>
          purchase(options.fixture, `${prefix}${b * batch + i}`, b * batch + i),
        );
        return { method: 'POST', path: '/api/v1/incoming-txn', headers, body: JSON.stringify(events) };
      },
      stopWhen: () => next >= batches,
    });
    if (r.errors > 0) throw new Error(`offering the backlog failed: ${r.firstError}`);
  };
  const result = await measureDrain(batches * batch, options.timeoutMs, offer, () => done);
  options.receiver.onWebhook = () => undefined;
  return result;
}

export async function runFloorDrain(options: {
  temporalAddress: string;
  worker: ChildProcess;
  taskQueue: string;
  backlog: number;
  timeoutMs: number;
  runId: string;
  workflowType?: string;
}): Promise<DrainResult> {
  let done = 0;
  options.worker.on('message', (m: unknown) => {
    if ((m as { completed?: number })?.completed) done += (m as { completed: number }).completed;
  });
  const connection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection });
  // The API's own hand-over queue, and the same signals in flight per chunk as its handOver.
  const queue = createHandoverQueue(
    async (items) => {
      await mapLimited(items, HANDOVER_CONCURRENCY, (item) =>
        client.workflow.signalWithStart(options.workflowType ?? FLOOR_WORKFLOW_TYPE, {
          workflowId: item.workflowId,
          taskQueue: options.taskQueue,
          args: [],
          signal: 'settlement',
          signalArgs: [{ eventId: item.eventId }],
          ...startAttributes(item),
        }),
      );
      return { failed: [] };
    },
    createLogger('warn', 'bench-floor'),
  );
  const batches = Math.ceil(options.backlog / 100);
  const offer = async () => {
    for (let b = 0; b < batches; b++) {
      queue.enqueue(
        Array.from({ length: 100 }, (_, i) => {
          const id = `${options.runId}-${b * 100 + i}`;
          return {
            eventId: `txn_${id}`,
            issuerId: 'iss_floor',
            chgId: 'chg_floor',
            externalId: id,
            workflowId: `floor/${id}`,
            signal: 'settlement' as const,
          };
        }),
      );
    }
    await queue.drain();
  };
  try {
    return await measureDrain(batches * 100, options.timeoutMs, offer, () => done);
  } finally {
    await connection.close();
  }
}

/** Drain check: waits (bounded) until no event of the backlog is still pending, then sums the ledger. */
export async function pendingAfterDrain(
  databaseUrl: string,
  issuerId: string,
  prefix: string,
  timeoutMs: number,
): Promise<{ accepted: number; pending: number; trialBalanceMinor: number; entries: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ accepted: string; pending: string }>(
        `SELECT count(*) AS accepted, count(*) FILTER (WHERE reward_status = 'pending') AS pending
           FROM ingested_event WHERE issuer_id = $1 AND kind = 'settled' AND external_id LIKE $2`,
        [issuerId, `${prefix}%`],
      );
      const result = { accepted: Number(rows[0].accepted), pending: Number(rows[0].pending) };
      if (result.pending === 0 || Date.now() > deadline) {
        // Every entry of every transfer, debits positive: a balanced ledger sums to zero.
        const ledger = await client.query<{ total: string; entries: string }>(
          `SELECT coalesce(sum(amount_minor), 0) AS total, count(*) AS entries FROM ledger_entry WHERE issuer_id = $1`,
          [issuerId],
        );
        return { ...result, trialBalanceMinor: Number(ledger.rows[0].total), entries: Number(ledger.rows[0].entries) };
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    await client.end();
  }
}
