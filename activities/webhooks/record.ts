// Writes a webhook record (`evt_`) in the caller's transaction, so a webhook exists exactly
// when the effects it announces were committed. Idempotent by (type, source event). The row
// is the outbox entry of its first delivery attempt: the NOTIFY, delivered at commit, wakes
// the worker's relay at once (activities/webhooks/outbox.ts).
import { newId } from '../../core/ids';
import { Prisma } from '../../prisma/generated/client';
import { OUTBOX_CHANNEL } from './outbox';

import type { WebhookData, WebhookType } from '../../core/webhooks/payloads';

export type { WebhookType };

export async function recordWebhook(
  tx: Prisma.TransactionClient,
  input: { issuerId: string; type: WebhookType; sourceEventId: string; data: WebhookData; at: Date },
): Promise<string> {
  const idempotencyKey = `${input.type}:${input.sourceEventId}`;
  const existing = await tx.webhook.findUnique({ where: { idempotencyKey }, select: { id: true } });
  if (existing) return existing.id;
  const id = newId('evt');
  await tx.webhook.create({
    data: {
      id,
      issuerId: input.issuerId,
      type: input.type,
      sourceEventId: input.sourceEventId,
      idempotencyKey,
      data: input.data as unknown as Prisma.InputJsonValue,
      createdAt: input.at,
      updatedAt: input.at,
    },
  });
  await tx.$executeRaw`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`;
  return id;
}

/**
 * The same record as a CTE and a NOTIFY for a caller's single write statement (the
 * settlement's; activities/ledger/batch.ts). No existence check: the caller holds the lock of
 * the source event and has seen it unprocessed, so no record of it can exist yet. With
 * `claimMs`, the row is written claimed for the caller's own relay (outbox.ts, LocalRelay) and
 * no relay is woken.
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
      INSERT INTO webhook (id, issuer_id, type, source_event_id, idempotency_key, data, status, relay_claimed_until, created_at, updated_at)
      VALUES (${id}, ${input.issuerId}, ${input.type}, ${input.sourceEventId}, ${`${input.type}:${input.sourceEventId}`}, ${JSON.stringify(data)}::jsonb,
              ${claimed ? 'delivering' : 'pending'}, ${claimed ? Prisma.sql`now() + ${claimMs} * interval '1 millisecond'` : Prisma.sql`NULL`},
              ${input.at}, ${input.at}))`,
    select: claimed
      ? Prisma.sql`'claimed' AS notified`
      : Prisma.sql`pg_notify(${OUTBOX_CHANNEL}, '')::text AS notified`,
  };
}
