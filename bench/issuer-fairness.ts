// Phase: fairness between issuers. One issuer dumps a backlog (50,000 settled events by default,
// in batches of 1,000 as fast as the API takes them: a processor re-sending a day of files)
// while a second, small issuer sends 2 a second; measured: the small issuer's latency from the
// start of its POST to its webhook's arrival, over the phase's window (120 s by default, from
// the first batch of the dump). Whatever the dump has not finished by then is cleared, so that
// the phases after it run on the stack they would have had: the API and the worker are
// restarted (an API hands over from memory what it accepted, and it must forget it), the dump's
// events leave the hand-over queue, and its workflows still running are terminated (bounded:
// without admission there may be tens of thousands). Its events stay stored, never processed.
// A Temporal dev server that dies under the dump is recorded as the phase's result (its small
// issuer's webhooks count as lost); the phases after it cannot run on that stack.
import http from 'node:http';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { percentile, send } from './load';
import { buildFixture, purchase, type Fixture } from './fixtures';
import type { Receiver } from './receiver';
import type { BenchStack } from './stack';

export interface IssuerFairnessResult {
  dumped: number;
  /** Seconds the API took to accept the whole dump (or the window, if longer). */
  dumpSeconds: number;
  dumpErrors: number;
  /** The dump's purchases completed within the window. */
  dumpCompleted: number;
  seconds: number;
  small: { sent: number; received: number; lost: number; p50Ms: number; p99Ms: number; maxMs: number; errors: number };
  cleared: { queued: number; terminated: number; seconds: number };
  /** How the Temporal dev server exited, if it died during the phase: nothing was cleared then. */
  temporalDied?: string;
}

/** How long the small issuer's last webhooks may take after the window before they count as lost. */
export const STRAGGLERS_MS = 60_000;
/** Terminating the dump's runs stops after this, whatever is left (a backlog without admission). */
const CLEAR_BUDGET_MS = 300_000;

export async function runIssuerFairness(options: {
  stack: BenchStack;
  big: Fixture;
  receiver: Receiver;
  dumpEvents: number;
  smallRatePerSecond: number;
  seconds: number;
  runId: string;
  log: (line: string) => void;
}): Promise<IssuerFairnessResult> {
  const { stack, receiver } = options;
  const small = await buildFixture({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    groups: 5,
    webhookUrl: receiver.url,
  });
  const dumpPrefix = `dump-${options.runId}-`;
  const smallPrefix = `small-${options.runId}-`;
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let dumpCompleted = 0;
  receiver.onWebhook = (a) => {
    if (a.externalId.startsWith(dumpPrefix)) dumpCompleted++;
    const t0 = sentAt.get(a.externalId);
    if (t0 !== undefined && a.externalId.startsWith(smallPrefix)) latencies.push(a.atMs - t0);
  };
  const startMs = performance.now();
  const dumping = dump(stack.apiUrl, options.big, options.dumpEvents, dumpPrefix, options.seconds * 1000);
  const smallSends = await trickle(
    stack.apiUrl,
    small,
    options.smallRatePerSecond,
    options.seconds,
    smallPrefix,
    sentAt,
  );
  const dumped = await dumping;
  const deadline = performance.now() + STRAGGLERS_MS;
  while (latencies.length < smallSends.sent - smallSends.errors && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 200));
  const windowCompleted = dumpCompleted;
  receiver.onWebhook = () => undefined;
  options.log(
    `issuer fairness: dump of ${dumped.events} accepted in ${dumped.seconds.toFixed(0)} s, ${windowCompleted} of it completed; clearing the rest`,
  );
  // A server that died under the dump is the phase's result: recorded, not a failed run.
  const temporalDied = stack.temporalDied();
  const cleared = temporalDied
    ? { queued: 0, terminated: 0, seconds: 0 }
    : await clearDump(stack, options.big, dumpPrefix);
  const received = latencies.length;
  return {
    dumped: dumped.events,
    dumpSeconds: dumped.seconds,
    dumpErrors: dumped.errors,
    dumpCompleted: windowCompleted,
    seconds: (performance.now() - startMs) / 1000,
    small: {
      sent: smallSends.sent,
      received,
      lost: smallSends.sent - smallSends.errors - received,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: Math.max(...latencies),
      errors: smallSends.errors,
    },
    cleared,
    ...(temporalDied ? { temporalDied } : {}),
  };
}

/** The big issuer's backlog: batches of 1,000 from 4 connections, as fast as the API accepts them. */
async function dump(apiUrl: string, big: Fixture, events: number, prefix: string, maxMs: number) {
  const url = new URL(apiUrl);
  const headers = { authorization: `Bearer ${big.token}` };
  const batches = Math.ceil(events / 1000);
  const startMs = performance.now();
  let next = 0;
  let accepted = 0;
  let errors = 0;
  const connection = async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let b = next++; b < batches && performance.now() - startMs < maxMs; b = next++) {
      const size = Math.min(1000, events - b * 1000);
      const body = Array.from({ length: size }, (_, i) => purchase(big, `${prefix}${b * 1000 + i}`, b * 1000 + i));
      const path = '/api/v1/incoming-txn';
      const status = await send(agent, url, { method: 'POST', path, headers, body: JSON.stringify(body) }).catch(
        () => 0,
      );
      if (status === 204) accepted += size;
      else errors++;
    }
    agent.destroy();
  };
  await Promise.all([1, 2, 3, 4].map(connection));
  return { events: accepted, errors, seconds: (performance.now() - startMs) / 1000 };
}

/** The small issuer: one settled event every 1/rate s (open loop) for the window. */
async function trickle(
  apiUrl: string,
  small: Fixture,
  rate: number,
  seconds: number,
  prefix: string,
  sentAt: Map<string, number>,
) {
  const url = new URL(apiUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const headers = { authorization: `Bearer ${small.token}` };
  const total = Math.round(rate * seconds);
  let errors = 0;
  const posts: Array<Promise<void>> = [];
  const start = performance.now();
  for (let n = 0; n < total; n++) {
    const wait = start + (n * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const event = purchase(small, `${prefix}${n}`, n);
    sentAt.set(event.id, performance.now());
    posts.push(
      send(agent, url, { method: 'POST', path: '/api/v1/incoming-txn', headers, body: JSON.stringify(event) }).then(
        (status) => void (status === 204 || errors++),
        () => void errors++,
      ),
    );
  }
  await Promise.all(posts);
  agent.destroy();
  return { sent: total, errors };
}

/** The dump's unfinished purchases, cleared (see the header). */
async function clearDump(stack: BenchStack, big: Fixture, prefix: string) {
  const startMs = performance.now();
  await stack.restartService();
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const queued = await db.query(
      `DELETE FROM handover_pending WHERE event_id IN (
         SELECT id FROM ingested_event WHERE issuer_id = $1 AND external_id LIKE $2)`,
      [big.issuerId, `${prefix}%`],
    );
    const client = new Client({ connection });
    const query = `WorkflowId STARTS_WITH "txn/${big.issuerId}/${prefix}" AND ExecutionStatus = "Running"`;
    let terminated = 0;
    const stopAt = performance.now() + CLEAR_BUDGET_MS;
    const pending: Array<Promise<unknown>> = [];
    for await (const wf of client.workflow.list({ query })) {
      if (performance.now() > stopAt) break;
      pending.push(
        client.workflow
          .getHandle(wf.workflowId, wf.runId)
          .terminate('bench: the issuer fairness phase clears its dump')
          .then(
            () => terminated++,
            () => undefined,
          ),
      );
      if (pending.length >= 16) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    return { queued: queued.rowCount ?? 0, terminated, seconds: (performance.now() - startMs) / 1000 };
  } finally {
    await connection.close();
    await db.end();
  }
}
