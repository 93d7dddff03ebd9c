// The webhook retention job's activity (API.md, "Card data and erasure": stored webhook bodies
// older than the issuer's webhookRetentionDays are deleted by a sweep; decision 0056). Each call
// deletes one bounded batch of webhooks, with their deliveries and attempts, in ONE database
// transaction; the WebhookRetention workflow calls it while batches come back full.
//
// A webhook goes once its createdAt is more than its issuer's webhookRetentionDays behind the
// issuer's clock and every delivery of it has ended (FINISHED_DELIVERY_STATUSES). One still
// pending or retrying is kept whatever its age: its body is what the next attempt sends.
//
// Locks: the webhook rows first (a new delivery or attempt row takes a key-share lock on its
// webhook, so none can appear under the batch), then their deliveries, whose statuses are read
// under the lock, so a delivery reopened a moment before is seen reopened. Both SKIP LOCKED: a
// webhook whose record or delivery another transaction is changing (a replay, a recover, an
// attempt being recorded, which locks its delivery before its webhook) is left for the next run,
// so the sweep never waits for a writer and cannot deadlock with one.
//
// Idempotent: what a batch deleted is gone, so a retried or overlapping call finds the rest.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { FINISHED_DELIVERY_STATUSES } from '../../core/rules/webhook-retention';

/** The most webhooks one batch deletes: a transaction of a second or so, whatever the backlog. */
export const MAX_RETENTION_BATCH = 5000;

export interface RetentionDeps {
  db: Db;
  logger: Logger;
}

export interface RetentionBatchInput {
  /** The workflow's clock, so time-skipping tests and replays agree on "now". */
  atMs: number;
  batchSize: number;
  /** Only this issuer's webhooks (tests, an operator's run); every issuer's when absent. */
  issuerId?: string;
}

export interface RetentionBatchResult {
  /** Webhooks deleted, and the deliveries and attempts deleted with them. */
  webhooks: number;
  deliveries: number;
  attempts: number;
  /** The batch was full: more webhooks past their retention may be waiting. */
  more: boolean;
}

const FINISHED = Prisma.sql`${[...FINISHED_DELIVERY_STATUSES]}::text[]`;

export async function deleteExpiredWebhooks(
  deps: RetentionDeps,
  input: RetentionBatchInput,
): Promise<RetentionBatchResult> {
  if (!Number.isSafeInteger(input.batchSize) || input.batchSize < 1 || input.batchSize > MAX_RETENTION_BATCH)
    throw new RangeError(`batchSize must be 1..${MAX_RETENTION_BATCH}`);
  const result = await sqlTransaction(deps.db, async (tx) => {
    const candidates = await lockExpired(tx, input);
    const doomed = await withEveryDeliveryEnded(tx, candidates);
    const deleted = await deleteRecords(tx, doomed);
    return { ...deleted, more: candidates.length === input.batchSize };
  });
  if (result.webhooks > 0) deps.logger.info({ ...result, issuerId: input.issuerId }, 'webhooks past retention deleted');
  return result;
}

/**
 * Up to batchSize webhooks past their issuer's retention with no delivery still under way,
 * locked: issuer by issuer, the oldest first. A sandbox issuer dates its webhooks by its own
 * clock, so its cutoff is on that clock too.
 */
async function lockExpired(tx: SqlTx, input: RetentionBatchInput): Promise<string[]> {
  const at = new Date(input.atMs);
  const only = input.issuerId ? Prisma.sql`WHERE id = ${input.issuerId}` : Prisma.empty;
  const issuers = await tx.$queryRaw<Array<{ issuerId: string; cutoff: Date }>>`
    SELECT id AS "issuerId",
           ${at}::timestamptz + clock_offset_ms * interval '1 millisecond' - webhook_retention_days * interval '1 day' AS cutoff
      FROM issuer ${only} ORDER BY id`;
  const locked: string[] = [];
  for (const { issuerId, cutoff } of issuers) {
    if (locked.length >= input.batchSize) break;
    locked.push(...(await lockIssuerExpired(tx, issuerId, cutoff, input.batchSize - locked.length)));
  }
  return locked;
}

/**
 * One issuer's, read backwards along its list index (issuer, createdAt) and stopped at `limit`.
 * The cutoff is a value, not an expression over the issuer row, so the planner sees how many
 * rows lie behind it: given an expression it guesses, low, and sorts the whole backlog for every
 * batch. The delivery check is kept a per-row probe of the delivery's primary key by `OFFSET 0`
 * (decision 0010): made a join, it read the whole delivery table.
 */
async function lockIssuerExpired(tx: SqlTx, issuerId: string, cutoff: Date, limit: number): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT w.id FROM webhook w
     WHERE w.issuer_id = ${issuerId} AND w.created_at < ${cutoff}
       AND NOT EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.webhook_id = w.id AND d.status <> ALL (${FINISHED}) OFFSET 0)
     ORDER BY w.created_at, w.id
     LIMIT ${limit}
       FOR UPDATE OF w SKIP LOCKED`;
  return rows.map((r) => r.id);
}

/**
 * Of the locked webhooks, those whose every delivery is locked here too and has ended. A
 * delivery another transaction holds is skipped by the lock and so counted as not ended.
 */
async function withEveryDeliveryEnded(tx: SqlTx, webhookIds: string[]): Promise<string[]> {
  if (webhookIds.length === 0) return [];
  const locked = await tx.$queryRaw<Array<{ webhookId: string; status: string }>>`
    SELECT webhook_id AS "webhookId", status FROM webhook_delivery WHERE webhook_id = ANY (${webhookIds}::text[])
       FOR UPDATE SKIP LOCKED`;
  const all = await tx.$queryRaw<Array<{ webhookId: string; count: number }>>`
    SELECT webhook_id AS "webhookId", count(*)::int AS count FROM webhook_delivery
     WHERE webhook_id = ANY (${webhookIds}::text[]) GROUP BY webhook_id`;
  const ended = new Map<string, number>();
  for (const d of locked)
    if ((FINISHED_DELIVERY_STATUSES as readonly string[]).includes(d.status))
      ended.set(d.webhookId, (ended.get(d.webhookId) ?? 0) + 1);
  const total = new Map(all.map((r) => [r.webhookId, r.count]));
  return webhookIds.filter((id) => (ended.get(id) ?? 0) === (total.get(id) ?? 0));
}

/** Attempts and deliveries first: both reference the webhook (ON DELETE RESTRICT). */
async function deleteRecords(tx: SqlTx, webhookIds: string[]): Promise<Omit<RetentionBatchResult, 'more'>> {
  if (webhookIds.length === 0) return { webhooks: 0, deliveries: 0, attempts: 0 };
  const ids = Prisma.sql`${webhookIds}::text[]`;
  const attempts = await tx.$executeRaw`DELETE FROM webhook_attempt WHERE webhook_id = ANY (${ids})`;
  const deliveries = await tx.$executeRaw`DELETE FROM webhook_delivery WHERE webhook_id = ANY (${ids})`;
  const webhooks = await tx.$executeRaw`DELETE FROM webhook WHERE id = ANY (${ids})`;
  return { webhooks, deliveries, attempts };
}

export function createRetentionActivities(deps: RetentionDeps) {
  return { deleteExpiredWebhooks: (input: RetentionBatchInput) => deleteExpiredWebhooks(deps, input) };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;
