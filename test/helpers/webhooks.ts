// Webhook test helpers: a real local receiver on 127.0.0.1 whose answers a test scripts,
// webhook records written the way the lifecycle writes them, a relay as a worker runs one, and
// polling for a state.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { Db } from '../../prisma/client';
import type { Tx } from '../../core/domain/ledger/tx';
import { recordWebhook, type WebhookType } from '../../core/domain/webhook-records';
import type { TestIssuer } from './app';
import { WEBHOOK_TYPES, webhookBodySchema, type QualifiedSettlementData } from '../../core/webhooks/payloads';
import { compileBody } from '../../api/validation';
import { openSecrets, sealSecrets, type PlainSecrets, type SealedSecrets } from '../../core/webhooks/secret-sealing';
import { generateSigningSecret } from '../../core/webhooks/signing';
import { testDatabaseUrl, testWebhookDestinations, testWebhookSecretKeys } from './env';
import { newId } from '../../core/ids';
import { createLogger } from '../../core/logger';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { startWebhookRelay, type RelayDeps, type RelayOptions, type WebhookRelay } from '../../worker/webhook-relay';

/** A status code to answer with, or 'hang': never answer (the sender's time-out must fire). */
export type ReceiverAnswer = number | 'hang';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Bodies that broke the published webhook contract; close() fails when there are any. */
  contractViolations: string[];
  /** Replaces the script: answer for the n-th request (0-based). */
  answer: (n: number) => ReceiverAnswer;
  close(): Promise<void>;
}

export async function startReceiver(answer: (n: number) => ReceiverAnswer = () => 204): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: Receiver = { url: '', requests, answer, contractViolations: [], close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = requests.length;
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ headers: req.headers, body });
      const violation = contractViolation(body);
      if (violation) receiver.contractViolations.push(violation);
      const reply = receiver.answer(n);
      if (reply === 'hang') return;
      res.statusCode = reply;
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    assert.deepEqual(
      receiver.contractViolations,
      [],
      'every delivered webhook matches the webhooks section of /openapi.json',
    );
  };
  return receiver;
}

const bodyValidators = new Map(WEBHOOK_TYPES.map((type) => [type, compileBody(webhookBodySchema(type))]));

/** Why a delivered body breaks the webhook contract (core/webhooks/payloads.ts), if it does. */
export function contractViolation(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `not JSON: ${body.slice(0, 80)}`;
  }
  const type = (parsed as { type?: string } | null)?.type;
  const validate = bodyValidators.get(type as WebhookType);
  if (!validate) return `unknown type ${String(type)}`;
  return validate(parsed) ? undefined : `${type}: ${JSON.stringify(validate.errors)}`;
}

/** Spellings of private and local addresses: every one names an address webhooks may not reach. */
export const INTERNAL_HOSTS = [
  '127.0.0.1',
  'localhost',
  '[::1]',
  '0.0.0.0',
  '127.1',
  '2130706433',
  '0x7f000001',
  '0177.0.0.1',
  '0x7f.1',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::127.0.0.1]',
  '[64:ff9b::127.0.0.1]',
  '[2002:7f00:1::1]',
  '169.254.169.254',
  '[::ffff:169.254.169.254]',
  '10.0.0.1',
  '172.16.0.1',
  '192.168.1.1',
  '100.64.0.1',
  '[fd00::1]',
  '[fe80::1]',
  '[::]',
  '224.0.0.1',
  '[ff02::1]',
  '255.255.255.255',
  'metadata.google.internal',
  'LOCALHOST.',
  'api.localhost',
  'printer.local',
  'router.home.arpa',
  'postgres',
  '１２７.０.０.１',
];

/** A URL where nothing listens: a port taken and released at once. */
export async function deadUrl(): Promise<string> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hooks`;
}

/** The issuer's stored signing secrets, opened with the tests' key. */
export async function storedSecrets(db: Db, issuerId: string): Promise<PlainSecrets> {
  return openSecrets(
    testWebhookSecretKeys,
    issuerId,
    await db.webhookEndpoint.findFirstOrThrow({ where: { issuerId }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
  );
}

/** Secret columns for an endpoint written straight into the table: a fresh secret, sealed as the API seals it. */
export function sealedNewSecret(issuerId: string): SealedSecrets {
  return sealSecrets(testWebhookSecretKeys, issuerId, { secret: generateSigningSecret(), previousSecret: null });
}

/**
 * An endpoint row written straight into the table, as the API stores one (secret sealed with the
 * tests' key), without the destination checks of saving. Returns its id (`whe_`).
 */
export async function insertEndpoint(
  db: Db,
  issuerId: string,
  url: string,
  options: { enabledTypes?: readonly string[]; createdAt?: Date } = {},
): Promise<string> {
  const id = newId('whe');
  const at = options.createdAt ?? new Date();
  await db.webhookEndpoint.create({
    data: {
      id,
      issuerId,
      url,
      enabledTypes: [...(options.enabledTypes ?? WEBHOOK_TYPES)],
      ...sealedNewSecret(issuerId),
      createdAt: at,
      updatedAt: at,
    },
  });
  return id;
}

/** The id of the issuer's first (oldest) endpoint, the one the singular endpoint routes address. */
export async function firstEndpointId(db: Db, issuerId: string): Promise<string> {
  const endpoint = await db.webhookEndpoint.findFirstOrThrow({
    where: { issuerId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true },
  });
  return endpoint.id;
}

/** The webhook's delivery to one endpoint. */
export function deliveryOf(db: Db, webhookId: string, endpointId: string) {
  return db.webhookDelivery.findUniqueOrThrow({ where: { webhookId_endpointId: { webhookId, endpointId } } });
}

/** Configures the issuer's endpoint through the API and returns its signing secret. */
export async function configureEndpoint(issuer: TestIssuer, url: string, enabledTypes?: string[]): Promise<string> {
  const res = await issuer.call('PUT', '/api/v2/webhook-endpoint', { url, ...(enabledTypes ? { enabledTypes } : {}) });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.body.signingSecret;
}

/** A qualified_settlement `data` as the contract has it (core/webhooks/payloads.ts), for records tests write. */
export function settlementData(
  transactionId: string = `txn_${randomUUID()}`,
  earnedAmountMinor = 500,
): QualifiedSettlementData {
  return {
    chgId: `chg_${randomUUID()}`,
    transactionId,
    authorizationId: null,
    externalId: `ext-${randomUUID()}`,
    merchantId: `mp_${randomUUID()}`,
    currency: 'usd',
    rewardEventIds: [`brevt_${randomUUID()}`],
    rewardGrantIds: [],
    earnedAmountMinor,
    cashbackAmountMinor: earnedAmountMinor,
    brandedAmountMinor: 0,
    spentAmountMinor: 0,
  };
}

/**
 * A qualified_settlement webhook written as a lifecycle step writes one: into the outbox, with a
 * delivery per subscribed endpoint and the NOTIFY that wakes the relays. Returns its id.
 */
export function outboxWebhook(db: Db, issuerId: string, at: Date = new Date()): Promise<string> {
  return db.$transaction((tx) =>
    recordWebhook(tx, {
      issuerId,
      type: 'qualified_settlement',
      sourceEventId: `txn_${randomUUID()}`,
      at,
      data: settlementData(),
    }),
  );
}

/**
 * A webhook relay (worker/webhook-relay.ts) as a worker runs one, over `db` with the run's
 * webhook destinations and key, on real time, handing failures to runs on `engine`.
 */
export function startTestRelay(
  db: Db,
  engine: WorkflowEngine,
  deps: Partial<RelayDeps> = {},
  options: Partial<RelayOptions> = {},
): WebhookRelay {
  return startWebhookRelay(
    {
      db,
      logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
      clock: { now: () => new Date() },
      temporal: engine,
      databaseUrl: testDatabaseUrl(),
      webhookDestinations: testWebhookDestinations,
      webhookSecretKeys: testWebhookSecretKeys,
      ...deps,
    },
    options,
  );
}

/**
 * A webhook record as the relay leaves one it handed to a WebhookDelivery workflow: tests that
 * drive that workflow themselves get a row no relay of the run will also deliver.
 */
export async function newWebhookRecord(
  db: Db,
  issuerId: string,
  type: WebhookType = 'qualified_settlement',
): Promise<string> {
  const sourceEventId = `txn_${randomUUID()}`;
  return db.$transaction(async (tx) => {
    const id = await recordWebhook(tx, {
      issuerId,
      type,
      sourceEventId,
      at: new Date(),
      data: settlementData(sourceEventId),
    });
    await tx.webhookDelivery.updateMany({ where: { webhookId: id }, data: { relayedAt: new Date() } });
    return id;
  });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A webhook's delivery state as GET /api/v2/webhooks/{id} sums it up from its deliveries. */
export interface WebhookState {
  status: string;
  /** Attempts to every endpoint. */
  attemptCount: number;
  nextAttemptAt: Date | null;
  /** When every delivery's outbox entry was done; null while one is not. */
  relayedAt: Date | null;
}

export async function webhookState(db: Db, webhookId: string): Promise<WebhookState> {
  const [row] = await db.$queryRaw<WebhookState[]>`
    SELECT CASE WHEN bool_or(d.status = 'delivering') THEN 'delivering' WHEN bool_or(d.status = 'pending') THEN 'pending'
                WHEN bool_or(d.status = 'failed') OR count(d.*) = 0 THEN 'failed' WHEN bool_or(d.status = 'delivered') THEN 'delivered'
                ELSE 'skipped' END AS status,
           (SELECT count(*)::int FROM webhook_attempt a WHERE a.webhook_id = w.id) AS "attemptCount",
           min(d.next_attempt_at) AS "nextAttemptAt",
           CASE WHEN bool_and(d.relayed_at IS NOT NULL) THEN max(d.relayed_at) END AS "relayedAt"
      FROM webhook w LEFT JOIN webhook_delivery d ON d.webhook_id = w.id
     WHERE w.id = ${webhookId} GROUP BY w.id`;
  assert.ok(row, `no webhook ${webhookId}`);
  return row;
}

export async function waitForWebhookStatus(db: Db, webhookId: string, statuses: string[], timeoutMs?: number) {
  return waitFor(
    `webhook ${webhookId} to reach ${statuses.join('|')}`,
    async () => {
      const state = await webhookState(db, webhookId);
      return statuses.includes(state.status) ? state : undefined;
    },
    timeoutMs,
  );
}

/**
 * A qualified_settlement webhook as a relay that died left it: written, its delivery to
 * `endpointId` claimed until `claimedUntil` and `delivering` with `attemptCount` attempts, and
 * whatever `alsoRecorded` writes in the same transaction (e.g. the attempt it recorded).
 */
export function webhookLeftByDeadRelay(
  db: Db,
  issuerId: string,
  endpointId: string,
  delivery: { claimedUntil: Date; attemptCount?: number },
  alsoRecorded: (tx: Tx, webhookId: string) => Promise<unknown> = async () => undefined,
): Promise<string> {
  return db.$transaction(async (tx) => {
    const webhookId = await recordWebhook(tx, {
      issuerId,
      type: 'qualified_settlement',
      sourceEventId: `txn_${randomUUID()}`,
      at: new Date(),
      data: settlementData(),
    });
    await tx.webhookDelivery.update({
      where: { webhookId_endpointId: { webhookId, endpointId } },
      data: { relayClaimedUntil: delivery.claimedUntil, status: 'delivering', attemptCount: delivery.attemptCount },
    });
    await alsoRecorded(tx, webhookId);
    return webhookId;
  });
}

/** A delivery of an aged webhook: its endpoint (null: an attempt with no endpoint), status and attempts. */
export interface AgedDelivery {
  endpointId: string | null;
  status?: 'pending' | 'delivering' | 'delivered' | 'failed' | 'skipped';
  attempts: number;
}

/**
 * A qualified_settlement webhook written `daysAgo` days before `now`, with these deliveries (a
 * null endpoint writes attempts only, as for an issuer that had none) and their attempts. A
 * `pending` one is claimed by a relay for a day, and every other is relayed, so no relay of the
 * run takes any of them. Returns its id.
 */
export async function agedWebhook(
  db: Db,
  issuerId: string,
  now: Date,
  daysAgo: number,
  deliveries: AgedDelivery[],
): Promise<string> {
  const at = new Date(now.getTime() - daysAgo * 86_400_000);
  const id = newId('evt');
  await db.$transaction(async (tx) => {
    await tx.webhook.create({
      data: {
        ...{ id, issuerId, type: 'qualified_settlement', sourceEventId: `txn_${randomUUID()}` },
        ...{ idempotencyKey: `aged:${id}`, data: settlementData() as object, deliveriesWritten: true },
        ...{ createdAt: at, updatedAt: at },
      },
    });
    for (const d of deliveries) {
      if (d.endpointId !== null) {
        const pending = d.status === 'pending';
        await tx.webhookDelivery.create({
          data: {
            ...{ webhookId: id, endpointId: d.endpointId, issuerId, status: d.status, attemptCount: d.attempts },
            relayedAt: pending ? null : at,
            relayClaimedUntil: pending ? new Date(Date.now() + 86_400_000) : null,
            ...{ createdAt: at, updatedAt: at },
          },
        });
      }
      for (let n = 1; n <= d.attempts; n++)
        await tx.webhookAttempt.create({
          data: {
            ...{ id: `${id}/${d.endpointId ?? 'none'}/attempt/${n}`, webhookId: id, endpointId: d.endpointId },
            ...{ attemptNumber: n, startedAt: at },
            ...{
              statusCode: 500,
              latencyMs: 5,
              outcome: 'failed',
              errorClass: 'http_status',
              error: 'http_status: 500',
            },
          },
        });
    }
  });
  return id;
}
