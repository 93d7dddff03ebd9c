// The production-like cluster under failure: a real Temporal server on PostgreSQL,
// two API processes and two worker processes. A few thousand settled events go in through both
// APIs; mid-run one API is killed with SIGKILL right after it acknowledged a batch (its
// hand-over to Temporal cut short: the sweeper's to finish) and one worker with SIGKILL while
// it works (its workflow tasks, local activities and webhook claims time out and move to the
// survivor). Then every event must reach its outcome exactly once: one settlement's postings,
// one webhook, delivered and received, and the ledger balanced.
// Run with `npm run test:cluster` (docs/operating/runbook.md, "Production-like cluster"); not part of `npm test`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { Client, Connection } from '@temporalio/client';
import { startCluster, type Cluster, type ServiceChild } from '../../scripts/cluster/cluster';
import { createDb } from '../../prisma/client';
import { assertLedgerHealthy } from '../helpers/ledger';
import { startReceiver, type Receiver } from '../helpers/webhooks';
import { buildClusterFixture, plannedEvent, type ClusterFixture, type PlannedEvent } from './fixture';
import { caller } from '../../bench/fixtures';
import { sendBatches } from './sender';

const EVENTS = Number(process.env.CLUSTER_TEST_EVENTS ?? 3000);
const BATCH = 50;
/** Offered events per second; about what the cluster settles here, so the run overlaps its processing. */
const EVENTS_PER_SECOND = Number(process.env.CLUSTER_TEST_RATE ?? 50);
const DRAIN_TIMEOUT_MS = Number(process.env.CLUSTER_TEST_DRAIN_SECONDS ?? 1200) * 1000;
const KEEP = process.env.CLUSTER_TEST_KEEP === '1';

const log = (line: string) => console.log(`    [cluster] ${line}`);

describe('production-like cluster (real Temporal server, 2 APIs, 2 workers)', function () {
  this.timeout(60 * 60_000);
  let dataDir: string;
  let cluster: Cluster | undefined;
  let receiver: Receiver | undefined;
  let sql: pg.Pool | undefined;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'rewards-cluster-'));
    const started = performance.now();
    cluster = await startCluster({ dataDir, persistent: false, output: 'files', log });
    log(`up in ${((performance.now() - started) / 1000).toFixed(0)} s (logs in ${join(dataDir, 'logs')})`);
    receiver = await startReceiver();
    sql = new pg.Pool({ connectionString: cluster.databaseUrl, max: 2 });
  });

  let failed = false;
  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async () => {
    await sql?.end();
    try {
      await cluster?.stop();
    } finally {
      // A failed run (or a cluster that did not start) keeps the logs for whoever reads the failure.
      if (KEEP || failed || !cluster) log(`kept ${dataDir} (logs/ holds each process's output)`);
      else rmSync(dataDir, { recursive: true, force: true });
      // Last: it fails the run if any body broke the published webhook contract.
      await receiver?.close();
    }
  });

  it('takes every event to its outcome exactly once while one API and one worker are killed with SIGKILL', async () => {
    const [api1, api2] = cluster!.apis;
    const [, worker2] = cluster!.workers;
    const fixture = await buildClusterFixture({
      apiUrl: api1.url,
      operatorToken: cluster!.operatorToken,
      groups: 20,
      webhookUrl: receiver!.url,
    });
    const runId = randomUUID().slice(0, 8);
    const planned = Array.from({ length: EVENTS }, (_, n) => plannedEvent(fixture, `cl-${runId}-${n}`, n));
    const batches = Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, b) =>
      planned.slice(b * BATCH, (b + 1) * BATCH).map((p) => p.event),
    );

    // API 2 dies right after acknowledging a batch at 40% of the run; worker 2 at 55%, busy.
    const killApiAfter = nearest(batches.length * 0.4, (b) => b % 2 === 1);
    const killWorkerAfter = Math.floor(batches.length * 0.55);
    const kills: string[] = [];
    const ackedByApi2: string[] = [];
    let leftToSweeper = -1;
    const started = performance.now();
    const sent = await sendBatches({
      apis: cluster!.apis,
      token: fixture.token,
      batches,
      batchesPerSecond: EVENTS_PER_SECOND / BATCH,
      afterAccepted: async (b, api) => {
        if (api === api2) ackedByApi2.push(...batches[b].map((e) => String((e as { id: string }).id)));
        if (b === killApiAfter && api === api2) {
          kills.push(await sigkill(api2, started));
          leftToSweeper = await notHandedOver(sql!, fixture.issuerId, ackedByApi2);
        }
        if (b === killWorkerAfter) kills.push(await sigkill(worker2, started));
      },
    });
    log(
      `sent ${EVENTS} events in ${sent.seconds.toFixed(0)} s (${JSON.stringify(sent.acceptedBy)} batches; ${sent.resent} re-sent, ${sent.rateLimited} rate-limited); ${kills.join('; ')}`,
    );
    log(
      `${leftToSweeper} of the ${ackedByApi2.length} events api-2 acknowledged were not handed over to Temporal when it died: the sweeper's`,
    );
    assert.equal(kills.length, 2, 'one API and one worker were killed');

    const outcomes = await waitForOutcomes(sql!, fixture.issuerId, EVENTS, DRAIN_TIMEOUT_MS);
    const webhooks = await waitForDeliveries(sql!, receiver!, fixture.issuerId, EVENTS, DRAIN_TIMEOUT_MS);
    const seconds = (performance.now() - started) / 1000;

    assert.deepEqual(outcomes, { matched: EVENTS }, 'every event settled and matched, none pending or unknown');
    await assertPostedOnce(sql!, fixture.issuerId, planned);
    await assertWebhooksOnce(sql!, receiver!, fixture, EVENTS);
    await assertBalanced(cluster!, api1, fixture.issuerId);
    await assertVisible(cluster!, fixture.issuerId, EVENTS);
    for (const survivor of [api1, cluster!.workers[0]])
      assert.equal(survivor.child.exitCode, null, `${survivor.name} is still up`);
    log(
      `${EVENTS} events to their outcome in ${seconds.toFixed(0)} s (${(EVENTS / seconds).toFixed(1)} events/s end to end); ` +
        `${webhooks.received} webhook requests received for ${EVENTS} webhooks (${webhooks.received - EVENTS} repeated)`,
    );
  });
});

/** The index nearest to `target` that satisfies `ok`. */
function nearest(target: number, ok: (i: number) => boolean): number {
  const base = Math.floor(target);
  return ok(base) ? base : base + 1;
}

async function sigkill(service: ServiceChild, started: number): Promise<string> {
  const exited = new Promise((r) => service.child.once('exit', r));
  service.child.kill('SIGKILL');
  await exited;
  assert.equal(service.child.signalCode, 'SIGKILL');
  return `${service.name} (pid ${service.child.pid}) SIGKILLed at ${((performance.now() - started) / 1000).toFixed(1)} s`;
}

/** How many of these events the API that stored them had not handed over to Temporal (still waiting in the queue). */
async function notHandedOver(sql: pg.Pool, issuerId: string, externalIds: string[]): Promise<number> {
  const { rows } = await sql.query<{ n: string }>(
    `SELECT count(*) AS n FROM ingested_event e JOIN handover_pending p ON p.event_id = e.id
      WHERE e.issuer_id = $1 AND e.kind = 'settled' AND e.external_id = ANY($2) AND p.admitted_at IS NULL`,
    [issuerId, externalIds],
  );
  return Number(rows[0].n);
}

/** Counts of the run's events by reward status once none is pending (bounded). */
async function waitForOutcomes(
  sql: pg.Pool,
  issuerId: string,
  expected: number,
  timeoutMs: number,
): Promise<Record<string, number>> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = 0;
  for (;;) {
    const { rows } = await sql.query<{ status: string; n: string }>(
      `SELECT reward_status AS status, count(*) AS n FROM ingested_event WHERE issuer_id = $1 AND kind = 'settled' GROUP BY 1`,
      [issuerId],
    );
    const counts = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    const total = rows.reduce((sum, r) => sum + Number(r.n), 0);
    if (total === expected && !counts.pending) return counts;
    if (Date.now() - lastReport > 30_000) {
      lastReport = Date.now();
      log(`outcomes so far: ${JSON.stringify(counts)} of ${expected}`);
    }
    assert.ok(
      Date.now() < deadline,
      `events still without outcome after ${timeoutMs / 1000} s: ${JSON.stringify(counts)}`,
    );
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** Waits (bounded) until every webhook of the issuer is delivered and the receiver has each id. */
async function waitForDeliveries(
  sql: pg.Pool,
  receiver: Receiver,
  issuerId: string,
  expected: number,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await sql.query<{ delivered: string }>(
      `SELECT count(*) FILTER (WHERE status = 'delivered') AS delivered FROM webhook_delivery WHERE issuer_id = $1`,
      [issuerId],
    );
    const receivedIds = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    if (Number(rows[0].delivered) === expected && receivedIds.size >= expected)
      return { received: receiver.requests.length };
    assert.ok(
      Date.now() < deadline,
      `after ${timeoutMs / 1000} s: ${rows[0].delivered} of ${expected} webhooks delivered, ${receivedIds.size} received`,
    );
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/** One settlement's transfers per event: as many as its reward has parts, amounts to the minor unit. */
async function assertPostedOnce(sql: pg.Pool, issuerId: string, planned: PlannedEvent[]): Promise<void> {
  const { rows } = await sql.query<{ externalId: string; transfers: string; earned: string; kinds: string[] }>(
    `SELECT e.external_id AS "externalId", count(t.id) AS transfers, coalesce(sum(t.amount_minor), 0) AS earned, array_agg(t.kind ORDER BY t.kind) AS kinds
       FROM ingested_event e LEFT JOIN ledger_transfer t ON t.transaction_id = e.id AND t.issuer_id = e.issuer_id
      WHERE e.issuer_id = $1 AND e.kind = 'settled' GROUP BY e.external_id`,
    [issuerId],
  );
  const byId = new Map(rows.map((r) => [r.externalId, r]));
  const wrong: string[] = [];
  for (const p of planned) {
    const row = byId.get(String(p.event.id));
    if (!row || Number(row.transfers) !== p.transfers || Number(row.earned) !== p.earnedMinor) {
      wrong.push(
        `${String(p.event.id)}: ${row ? `${row.transfers} transfers (${row.kinds.join(',')}) of ${row.earned}` : 'not stored'}, expected ${p.transfers} of ${p.earnedMinor}`,
      );
    }
  }
  assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} events not posted exactly once`);
  const { rows: total } = await sql.query<{ n: string }>(
    'SELECT count(*) AS n FROM ledger_transfer WHERE issuer_id = $1',
    [issuerId],
  );
  assert.equal(
    Number(total[0].n),
    planned.reduce((sum, p) => sum + p.transfers, 0),
    'no transfer beyond the settlements',
  );
}

/** One webhook per event, delivered, and each one received with a valid signature. */
async function assertWebhooksOnce(
  sql: pg.Pool,
  receiver: Receiver,
  fixture: ClusterFixture,
  expected: number,
): Promise<void> {
  const { rows } = await sql.query<{ id: string; status: string; sourceEventId: string }>(
    `SELECT w.id, d.status, w.source_event_id AS "sourceEventId"
       FROM webhook w LEFT JOIN webhook_delivery d ON d.webhook_id = w.id WHERE w.issuer_id = $1`,
    [fixture.issuerId],
  );
  assert.equal(rows.length, expected, 'one webhook per event');
  assert.equal(new Set(rows.map((r) => r.sourceEventId)).size, expected, 'no event has two webhooks');
  assert.deepEqual(
    rows
      .filter((r) => r.status !== 'delivered')
      .map((r) => r.id)
      .slice(0, 20),
    [],
    'every webhook delivered',
  );
  const verifier = new Webhook(fixture.signingSecret);
  const received = new Set<string>();
  for (const request of receiver.requests) {
    const body = verifier.verify(request.body, request.headers as Record<string, string>) as { webhookId: string };
    received.add(body.webhookId);
  }
  const stored = new Set(rows.map((r) => r.id));
  assert.deepEqual(
    rows
      .filter((r) => !received.has(r.id))
      .map((r) => r.id)
      .slice(0, 20),
    [],
    'every webhook received',
  );
  assert.deepEqual(
    [...received].filter((id) => !stored.has(id)).slice(0, 20),
    [],
    'no webhook received that was not recorded',
  );
}

/** The trial balance over the operator API, and the ledger's invariants over the database. */
async function assertBalanced(cluster: Cluster, api: ServiceChild, issuerId: string): Promise<void> {
  const balance = await caller(api.url, cluster.operatorToken)(
    'GET',
    `/admin/v1/ledger/trial-balance?issuerId=${issuerId}`,
  );
  assert.equal(balance.totalMinor, 0, 'the trial balance is 0');
  const db = createDb(cluster.databaseUrl, 1);
  try {
    await assertLedgerHealthy(db, issuerId);
  } finally {
    await db.$disconnect();
  }
}

/**
 * Every purchase's workflow is found through PostgreSQL visibility by our search attributes
 * (eventually consistent: bounded wait).
 */
async function assertVisible(cluster: Cluster, issuerId: string, expected: number): Promise<void> {
  const connection = await Connection.connect({ address: cluster.temporalAddress });
  try {
    const client = new Client({ connection, namespace: cluster.namespace });
    const query = `RewardsIssuerId = "${issuerId}" AND WorkflowType = "transactionLifecycle" AND RewardsStatus = "matched"`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { count } = await client.workflow.count(query);
      if (count === expected) return;
      assert.ok(Date.now() < deadline, `visibility finds ${count} of ${expected} lifecycles (${query})`);
      await new Promise((r) => setTimeout(r, 2000));
    }
  } finally {
    await connection.close();
  }
}
