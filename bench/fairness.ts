// Phase: webhook fairness (DESIGN.md, "Quality bars"). One endpoint that accepts connections and
// never answers receives 100 webhooks a second, beside 20 healthy endpoints (the bench's
// receiver): 4 of the hanging endpoint's own issuer and 4 of each of 4 other issuers. The
// endpoints are written straight into webhook_endpoint with sealed secrets, as the API would
// store them; the hanging one subscribes to qualified_auth only and the healthy ones to
// qualified_settlement only, so each webhook of the shared issuer goes to one side. Every
// tick (100 ms) one statement writes the tick's webhooks, their deliveries
// (core/domain/webhook-deliveries.ts, deliveriesOf) and the NOTIFY that wakes the relays,
// as the lifecycle's own writes do; each healthy issuer gets one webhook a second, which is
// one delivery a second to each of its 4 endpoints.
// Measured: each healthy delivery's latency from the webhook's created_at to its arrival at
// the receiver (a late or retried first attempt shows as a late arrival; one that never
// arrives within the drain counts as lost and as infinitely late in the percentiles), and the
// worker's resident memory every 2 s (/proc/<pid>/status), whose trend over the second half
// of the load must be flat: the first half is the warm-up, in which the heap grows to its
// working size and is first collected. The retry workflows the hanging endpoint's failed
// attempts start are counted too: the worker holds them, so they are where memory goes.
// BENCH_FAIRNESS_RATE=0 gives the same load without the hanging endpoint, a control for the
// memory trend. Afterwards the hanging endpoint's deliveries still in the
// outbox are set aside (skipped) and the endpoint disabled before its port closes: otherwise
// tens of thousands of them would fail at once against a closed port and start as many
// retry workflows during the next phase. A VACUUM then leaves the tables as autovacuum would.
import { readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Prisma } from '../prisma/generated/client';
import { createDb, type Db } from '../prisma/client';
import { sqlQuery } from '../prisma/sql-transaction';
import { newId } from '../core/ids';
import { deliveriesOf, OUTBOX_CHANNEL } from '../core/domain/webhook-deliveries';
import { sealSecrets } from '../core/webhooks/secret-sealing';
import { generateSigningSecret } from '../core/webhooks/signing';
import type { KeyRing } from '../core/crypto/key-ring';
import type { QualifiedSettlementData } from '../core/webhooks/payloads';
import { caller } from './fixtures';
import { startHangingEndpoint, type HangingEndpoint, type Receiver } from './receiver';
import {
  latencyFigures,
  memoryFigures,
  residentMiB,
  type LatencyFigures,
  type MemoryFigures,
  type MemorySample,
} from './fairness-figures';

const OTHER_ISSUERS = 4;
const HEALTHY_PER_ISSUER = 4;
const HANGING_TYPE = 'qualified_auth';
const HEALTHY_TYPE = 'qualified_settlement';
const TICK_MS = 100;
const SAMPLE_MS = 2_000;

export interface FairnessOptions {
  apiUrl: string;
  operatorToken: string;
  databaseUrl: string;
  temporalAddress: string;
  /** The stack's WEBHOOK_SECRET_KEYS, to seal the endpoints' secrets as the API does. */
  secretKeys: KeyRing;
  receiver: Receiver;
  /** The worker process, whose memory is sampled. */
  workerPid: number | undefined;
  seconds: number;
  hangingRate: number;
  drainSeconds: number;
  log: (line: string) => void;
}

export interface FairnessResult {
  seconds: number;
  hangingRate: number;
  healthyEndpoints: number;
  issuers: number;
  written: LoadWritten;
  healthy: LatencyFigures & { duplicates: number; drainSeconds: number };
  hanging: HangingState & { requestsArrived: number; skippedAtCleanup: number };
  /** WebhookDelivery workflows started during the phase and still running after the drain. */
  retryWorkflowsRunning: number;
  memory: MemoryFigures & { samples: MemorySample[] };
}

interface Layout {
  hangingIssuerId: string;
  hangingEndpointId: string;
  /** The hanging endpoint's issuer first. */
  healthy: Array<{ issuerId: string; endpointIds: string[] }>;
}

interface LoadWritten {
  hanging: number;
  healthy: number;
  statements: number;
  slowestStatementMs: number;
}

export async function measureFairness(o: FairnessOptions): Promise<FairnessResult> {
  const hangingEndpoint = await startHangingEndpoint();
  const db = createDb(o.databaseUrl, 2);
  try {
    const layout = await setUp(o, db, hangingEndpoint.url);
    const healthyIds = layout.healthy.flatMap((i) => i.endpointIds);
    const arrivals = collectArrivals(o.receiver, new Set(healthyIds));
    const memory = sampleMemory(o.workerPid);
    const startedAt = new Date();
    const created = new Map<string, number>();
    const written = await writeLoad(db, layout, o, created, (sofar) =>
      o.log(
        `fairness: ${sofar.healthy} healthy and ${sofar.hanging} hanging webhooks written, ${arrivals.firstAt.size} healthy deliveries received, worker RSS ${memory.latest().toFixed(0)} MiB`,
      ),
    );
    const hanging = await hangingState(db, layout.hangingEndpointId);
    const expected = await deliveriesTo(db, healthyIds);
    await drain(() => arrivals.firstAt.size >= expected, o.drainSeconds * 1000);
    memory.stop();
    const retryWorkflowsRunning = await runningDeliveryWorkflows(o.temporalAddress, startedAt);
    const latencies = [...arrivals.firstAt].map(([key, atMs]) => atMs - created.get(key.split(' ')[0])!);
    const skippedAtCleanup = await cleanUp(db, layout.hangingEndpointId, hangingEndpoint);
    return {
      seconds: o.seconds,
      hangingRate: o.hangingRate,
      healthyEndpoints: healthyIds.length,
      issuers: layout.healthy.length,
      written,
      healthy: {
        ...latencyFigures(latencies, expected),
        duplicates: arrivals.duplicates,
        drainSeconds: o.drainSeconds,
      },
      hanging: { ...hanging, requestsArrived: hangingEndpoint.requests, skippedAtCleanup },
      retryWorkflowsRunning,
      memory: { ...memoryFigures(memory.samples, o.seconds / 2, o.seconds), samples: memory.samples },
    };
  } finally {
    o.receiver.onWebhook = () => undefined;
    await hangingEndpoint.close();
    await db.$disconnect();
  }
}

/** Sandbox issuers through the operator API; endpoints straight into the table. */
async function setUp(o: FairnessOptions, db: Db, hangingUrl: string): Promise<Layout> {
  const operator = caller(o.apiUrl, o.operatorToken);
  const issuerIds: string[] = [];
  for (let i = 0; i <= OTHER_ISSUERS; i++) {
    const issuer = await operator('POST', '/admin/v1/issuers', {
      name: `Bench fairness issuer ${i + 1}`,
      environment: 'sandbox',
    });
    issuerIds.push(issuer.id as string);
  }
  const hangingEndpointId = await insertEndpoint(db, o.secretKeys, issuerIds[0], () => hangingUrl, HANGING_TYPE);
  const healthy: Layout['healthy'] = [];
  for (const issuerId of issuerIds) {
    const endpointIds: string[] = [];
    for (let i = 0; i < HEALTHY_PER_ISSUER; i++)
      endpointIds.push(
        await insertEndpoint(db, o.secretKeys, issuerId, (id) => `${o.receiver.url}/${id}`, HEALTHY_TYPE),
      );
    healthy.push({ issuerId, endpointIds });
  }
  return { hangingIssuerId: issuerIds[0], hangingEndpointId, healthy };
}

async function insertEndpoint(
  db: Db,
  keys: KeyRing,
  issuerId: string,
  url: (id: string) => string,
  type: string,
): Promise<string> {
  const id = newId('whe');
  const sealed = sealSecrets(keys, issuerId, { secret: generateSigningSecret(), previousSecret: null });
  await sqlQuery(
    db,
    Prisma.sql`
    INSERT INTO webhook_endpoint (id, issuer_id, url, enabled_types, description, secret_key_id, secret_ciphertext,
                                  created_at, updated_at)
    VALUES (${id}, ${issuerId}, ${url(id)}, ${[type]}::text[], 'bench fairness', ${sealed.secretKeyId},
            ${Buffer.from(sealed.secretCiphertext)}, now(), now())`,
  );
  return id;
}

interface Arrivals {
  /** `<webhook id> <endpoint id>` → Date.now() at the first arrival. */
  firstAt: Map<string, number>;
  duplicates: number;
}

/** The healthy endpoints' URLs end with their ids: the receiver's path names the endpoint. */
function collectArrivals(receiver: Receiver, endpointIds: Set<string>): Arrivals {
  const arrivals: Arrivals = { firstAt: new Map(), duplicates: 0 };
  receiver.onWebhook = (a) => {
    const endpointId = a.path.slice(a.path.lastIndexOf('/') + 1);
    if (!endpointIds.has(endpointId)) return;
    const key = `${a.webhookId} ${endpointId}`;
    if (arrivals.firstAt.has(key)) arrivals.duplicates++;
    else arrivals.firstAt.set(key, a.atEpochMs);
  };
  return arrivals;
}

interface Sampler {
  samples: MemorySample[];
  /** The last sample's MiB (NaN before the first). */
  latest(): number;
  stop(): void;
}

/** The worker's VmRSS now and every SAMPLE_MS; none where /proc is not there. */
function sampleMemory(pid: number | undefined): Sampler {
  const samples: MemorySample[] = [];
  const startMs = performance.now();
  const sample = () => {
    if (pid === undefined) return;
    let mib: number | undefined;
    try {
      mib = residentMiB(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return;
    }
    if (mib !== undefined) samples.push({ atS: (performance.now() - startMs) / 1000, rssMiB: mib });
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    samples,
    latest: () => (samples.length > 0 ? samples[samples.length - 1].rssMiB : NaN),
    stop: () => clearInterval(timer),
  };
}

interface WebhookRow {
  id: string;
  issuerId: string;
  type: string;
  sourceEventId: string;
  data: QualifiedSettlementData;
}

/**
 * Open loop: each tick writes what the rates owe by then, so a slow statement is caught up by
 * the next, never lowering the rates. Healthy webhooks go to the issuers in turn.
 */
async function writeLoad(
  db: Db,
  layout: Layout,
  o: FairnessOptions,
  created: Map<string, number>,
  progress: (sofar: LoadWritten) => void,
): Promise<LoadWritten> {
  const written: LoadWritten = { hanging: 0, healthy: 0, statements: 0, slowestStatementMs: 0 };
  const healthyRate = layout.healthy.length;
  const startMs = performance.now();
  const endMs = startMs + o.seconds * 1000;
  let nextProgressMs = startMs + 60_000;
  for (let tick = 1; ; tick++) {
    const nowMs = performance.now();
    const elapsedS = (Math.min(nowMs, endMs) - startMs) / 1000;
    const rows: WebhookRow[] = [];
    for (; written.hanging < Math.floor(o.hangingRate * elapsedS); written.hanging++)
      rows.push(webhookRow(layout.hangingIssuerId, HANGING_TYPE));
    for (; written.healthy < Math.floor(healthyRate * elapsedS); written.healthy++)
      rows.push(webhookRow(layout.healthy[written.healthy % healthyRate].issuerId, HEALTHY_TYPE));
    if (rows.length > 0) {
      const statementStart = performance.now();
      const returned = await sqlQuery<Array<{ id: string; type: string; created_at: Date }>>(db, writeStatement(rows));
      written.statements++;
      written.slowestStatementMs = Math.max(written.slowestStatementMs, performance.now() - statementStart);
      for (const r of returned) if (r.type === HEALTHY_TYPE) created.set(r.id, r.created_at.getTime());
    }
    if (nowMs >= endMs) return written;
    if (nowMs >= nextProgressMs) {
      progress(written);
      nextProgressMs += 60_000;
    }
    const waitMs = startMs + tick * TICK_MS - performance.now();
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
  }
}

/** A webhook as the lifecycle writes one: a purchase's ids, amounts as a real posting has them. */
function webhookRow(issuerId: string, type: string): WebhookRow {
  const transactionId = newId('txn');
  const authorizationId = type === HANGING_TYPE ? newId('auth') : null;
  const data: QualifiedSettlementData = {
    chgId: newId('chg'),
    transactionId,
    authorizationId,
    externalId: `bench-fairness-${transactionId}`,
    merchantId: newId('mp'),
    currency: 'usd',
    rewardEventIds: [newId('brevt')],
    rewardGrantIds: [],
    earnedAmountMinor: 500,
    cashbackAmountMinor: 500,
    brandedAmountMinor: 0,
    spentAmountMinor: 0,
  };
  return { id: newId('evt'), issuerId, type, sourceEventId: authorizationId ?? transactionId, data };
}

/** The webhooks, their deliveries to every subscribing endpoint, and the NOTIFY: one statement. */
function writeStatement(rows: WebhookRow[]): Prisma.Sql {
  return Prisma.sql`
    WITH candidate AS (
      SELECT * FROM unnest(${rows.map((r) => r.id)}::text[], ${rows.map((r) => r.issuerId)}::text[],
                           ${rows.map((r) => r.type)}::text[], ${rows.map((r) => r.sourceEventId)}::text[],
                           ${rows.map((r) => JSON.stringify(r.data))}::jsonb[])
             AS c(id, issuer_id, type, source_event_id, data)),
    written AS (
      INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, deliveries_written, created_at, updated_at)
      SELECT c.id, c.issuer_id, c.type, c.source_event_id, c.type || ':' || c.source_event_id, c.data, true, now(), now()
        FROM candidate c
      RETURNING id, issuer_id, type, created_at),
    delivered AS (${deliveriesOf('written')})
    SELECT w.id, w.type, w.created_at FROM written w CROSS JOIN (SELECT pg_notify(${OUTBOX_CHANNEL}, '')) n`;
}

interface HangingState {
  /** Deliveries written to the hanging endpoint. */
  deliveries: number;
  /** ... still in the outbox when the load ended: never attempted. */
  pendingAtEnd: number;
  /** Attempts recorded against it by then (first attempts, and retries by workflows). */
  attempts: number;
}

async function hangingState(db: Db, endpointId: string): Promise<HangingState> {
  const [row] = await sqlQuery<HangingState[]>(
    db,
    Prisma.sql`
    SELECT count(*)::int AS deliveries, count(*) FILTER (WHERE relayed_at IS NULL)::int AS "pendingAtEnd",
           (SELECT count(*)::int FROM webhook_attempt WHERE endpoint_id = ${endpointId}) AS attempts
      FROM webhook_delivery WHERE endpoint_id = ${endpointId}`,
  );
  return row;
}

async function deliveriesTo(db: Db, endpointIds: string[]): Promise<number> {
  const [row] = await sqlQuery<Array<{ n: number }>>(
    db,
    Prisma.sql`SELECT count(*)::int AS n FROM webhook_delivery WHERE endpoint_id = ANY (${endpointIds}::text[])`,
  );
  return row.n;
}

/** Each failed relayed attempt hands its delivery to a WebhookDelivery workflow, held by the worker. */
async function runningDeliveryWorkflows(temporalAddress: string, since: Date): Promise<number> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const { count } = await new Client({ connection }).workflow.count(
      `WorkflowType = 'webhookDelivery' AND ExecutionStatus = 'Running' AND StartTime >= '${since.toISOString()}'`,
    );
    return count;
  } finally {
    await connection.close();
  }
}

async function drain(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
}

/**
 * The hanging endpoint's unclaimed outbox rows skipped and the endpoint disabled, then its
 * port closed (the attempts in flight fail at once) and the tables vacuumed. Returns how many
 * deliveries were skipped.
 */
async function cleanUp(db: Db, endpointId: string, endpoint: HangingEndpoint): Promise<number> {
  const [row] = await sqlQuery<Array<{ skipped: number }>>(
    db,
    Prisma.sql`
    WITH skipped AS (
      UPDATE webhook_delivery SET status = 'skipped', relayed_at = now(), updated_at = now()
       WHERE endpoint_id = ${endpointId} AND relayed_at IS NULL
         AND (relay_claimed_until IS NULL OR relay_claimed_until < now())
      RETURNING 1),
    disabled AS (
      UPDATE webhook_endpoint SET status = 'disabled', disabled_reason = 'manual', disabled_at = now(), updated_at = now()
       WHERE id = ${endpointId})
    SELECT count(*)::int AS skipped FROM skipped`,
  );
  await endpoint.close();
  await sqlQuery(db, Prisma.sql`VACUUM (ANALYZE) webhook, webhook_delivery, webhook_attempt`);
  return row.skipped;
}
