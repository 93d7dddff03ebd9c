// Writes a webhook record (`evt_`) in the caller's transaction, so a webhook exists exactly
// when the effects it announces were committed. Idempotent by (type, source event). With it
// go its deliveries, one per subscribing endpoint (core/domain/webhook-deliveries.ts), the
// outbox entries of their first attempts: the NOTIFY, delivered at commit, wakes the worker's
// relay at once (activities/webhooks/outbox.ts).
import { newId } from '../ids';
import { Prisma } from '../../prisma/generated/client';
import { deliveriesOf, OUTBOX_CHANNEL } from './webhook-deliveries';
import { currentTraceparent } from '../tracing';

import type { WebhookData, WebhookType } from '../webhooks/payloads';
import type { FactWebhookData, FactWebhookType } from '../webhooks/fact-webhooks';
import type { SqlTx } from '../../prisma/sql-transaction';

export type { WebhookType };

export async function recordWebhook(
  tx: Prisma.TransactionClient,
  input: { issuerId: string; type: WebhookType; sourceEventId: string; data: WebhookData; at: Date },
): Promise<string> {
  const idempotencyKey = `${input.type}:${input.sourceEventId}`;
  const existing = await tx.webhook.findUnique({ where: { idempotencyKey }, select: { id: true } });
  if (existing) return existing.id;
  const id = newId('evt');
  await tx.$executeRaw`
    WITH written AS (
      INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, deliveries_written, traceparent, created_at, updated_at)
      VALUES (${id}, ${input.issuerId}, ${input.type}, ${input.sourceEventId}, ${idempotencyKey}, ${JSON.stringify(input.data)}::jsonb,
              true, ${currentTraceparent()}, ${input.at}, ${input.at})
      RETURNING id, issuer_id, type, created_at),
    deliveries AS (${deliveriesOf('written')})
    SELECT pg_notify(${OUTBOX_CHANNEL}, '')`;
  return id;
}

/**
 * The same record and its deliveries as CTEs and a NOTIFY for a caller's single write
 * statement (the settlement's; core/domain/ledger/batch.ts). No existence check: the caller
 * holds the lock of the source event and has seen it unprocessed, so no record of it can exist
 * yet. With `claimMs`, the deliveries are written claimed for the caller's own relay
 * (outbox.ts, LocalRelay) and no relay is woken.
 */
export function webhookWrite(
  input: { issuerId: string; type: WebhookType; sourceEventId: string; data: WebhookData; at: Date },
  claimMs?: number,
): { id: string; data: WebhookData; cte: Prisma.Sql; select: Prisma.Sql } {
  const id = newId('evt');
  const data = input.data;
  const claimed = claimMs !== undefined;
  return {
    id,
    data,
    cte: Prisma.sql`webhook_record AS (
      INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, deliveries_written, traceparent, created_at, updated_at)
      VALUES (${id}, ${input.issuerId}, ${input.type}, ${input.sourceEventId}, ${`${input.type}:${input.sourceEventId}`}, ${JSON.stringify(data)}::jsonb,
              true, ${currentTraceparent()}, ${input.at}, ${input.at})
      RETURNING id, issuer_id, type, created_at),
    webhook_deliveries AS (${deliveriesOf('webhook_record', claimMs)})`,
    select: claimed
      ? Prisma.sql`'claimed' AS notified`
      : Prisma.sql`pg_notify(${OUTBOX_CHANNEL}, '')::text AS notified`,
  };
}

export interface FactWebhook {
  issuerId: string;
  type: FactWebhookType;
  /** The fact's idempotency key (factKey in core/webhooks/fact-webhooks.ts). */
  factKey: string;
  /** What the fact is about (a grant, a refund, an authorization), for the record's lookups. */
  sourceId: string;
  data: FactWebhookData;
  at: Date;
}

/**
 * Records cardholder reward events in the caller's transaction, one statement for any number:
 * each only if one of the issuer's endpoints subscribes to its type (a fact nobody listens to
 * is no webhook: the grants of an issuer that never asked would otherwise each leave a record),
 * with a delivery per subscribing endpoint, and at most once per fact (ON CONFLICT on the
 * idempotency key: a second scan or a retried step finds the first). Returns the ids of the
 * records this call wrote; the NOTIFY, delivered at commit, wakes a relay only when there are some.
 */
export async function recordFactWebhooks(tx: SqlTx, events: readonly FactWebhook[]): Promise<string[]> {
  if (events.length === 0) return [];
  const ids = events.map(() => newId('evt'));
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    WITH candidate AS (
      SELECT * FROM unnest(${ids}::text[], ${events.map((e) => e.issuerId)}::text[], ${events.map((e) => e.type)}::text[],
                           ${events.map((e) => e.sourceId)}::text[], ${events.map((e) => e.factKey)}::text[],
                           ${events.map((e) => JSON.stringify(e.data))}::jsonb[], ${events.map((e) => e.at)}::timestamptz[])
             AS c(id, issuer_id, type, source_event_id, idempotency_key, data, at)),
    written AS (
      INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, deliveries_written, traceparent, created_at, updated_at)
      SELECT c.id, c.issuer_id, c.type, c.source_event_id, c.idempotency_key, c.data, true, ${currentTraceparent()}::text, c.at, c.at
        FROM candidate c
       WHERE EXISTS (SELECT 1 FROM webhook_endpoint ep WHERE ep.issuer_id = c.issuer_id AND c.type = ANY (ep.enabled_types))
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING id, issuer_id, type, created_at),
    deliveries AS (${deliveriesOf('written')})
    SELECT id FROM written`;
  if (rows.length > 0) await tx.$executeRaw`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`;
  return rows.map((r) => r.id);
}
