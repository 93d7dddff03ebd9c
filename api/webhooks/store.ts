import { errors } from '../../core/errors';
import type { Db } from '../../prisma/client';
import type { Webhook } from '../../prisma/generated/client';
import { cursorDate, decodeCursor, toPage } from '../pagination';
import type { WebhookListQuery } from './schemas';
import { presentAttempt, presentDelivery, presentWebhook, type WebhookSummary } from './present';
import { Prisma } from '../../prisma/generated/client';
import { sqlQuery } from '../../prisma/sql-transaction';

// Webhook records as issuers see them: a page of their webhooks, one webhook with its
// deliveries and every attempt. Another issuer's webhook is "not found", exactly like a
// missing one. A webhook's status and counts are those of its deliveries (SUMMARY).

/**
 * A webhook's delivery state, from its deliveries: delivering or pending while any is; else
 * failed if any failed (or none was made: no endpoint subscribed when it was written);
 * else delivered if any was; else skipped (every endpoint was disabled or deleted).
 */
const SUMMARY = Prisma.sql`
  (SELECT CASE WHEN bool_or(d.status = 'delivering') THEN 'delivering'
               WHEN bool_or(d.status = 'pending') THEN 'pending'
               WHEN bool_or(d.status = 'failed') OR count(*) = 0 THEN 'failed'
               WHEN bool_or(d.status = 'delivered') THEN 'delivered'
               ELSE 'skipped' END
     FROM webhook_delivery d WHERE d.webhook_id = w.id) AS status,
  (SELECT count(*)::int FROM webhook_attempt a WHERE a.webhook_id = w.id) AS "attemptCount",
  (SELECT max(d.last_attempt_at) FROM webhook_delivery d WHERE d.webhook_id = w.id) AS "lastAttemptAt",
  (SELECT min(d.next_attempt_at) FROM webhook_delivery d WHERE d.webhook_id = w.id) AS "nextAttemptAt",
  (SELECT min(d.delivered_at) FROM webhook_delivery d WHERE d.webhook_id = w.id) AS "deliveredAt"`;

const WEBHOOK_COLUMNS = Prisma.sql`w.id, w.type, w.data, w.test, w.created_at AS "createdAt"`;

/** Newest first, keyed by (createdAt, id) like the list index. */
export async function listWebhooks(db: Db, issuerId: string, query: WebhookListQuery) {
  const after = decodeCursor(query.cursor, 2);
  const rows = await sqlQuery<WebhookSummary[]>(
    db,
    Prisma.sql`
    SELECT * FROM (
      SELECT ${WEBHOOK_COLUMNS}, ${SUMMARY} FROM webhook w
       WHERE w.issuer_id = ${issuerId}
         ${query.type ? Prisma.sql`AND w.type = ${query.type}` : Prisma.empty}
         ${after ? Prisma.sql`AND (w.created_at, w.id) < (${cursorDate(after[0])}, ${String(after[1])})` : Prisma.empty}
    ) s ${query.status ? Prisma.sql`WHERE s.status = ${query.status}` : Prisma.empty}
     ORDER BY s."createdAt" DESC, s.id DESC
     LIMIT ${query.limit + 1}`,
  );
  const page = toPage(rows, query.limit, (r) => [r.createdAt.toISOString(), r.id]);
  return { data: page.data.map(presentWebhook), nextCursor: page.nextCursor };
}

/** The webhook, if it exists and (when issuerId is given) belongs to that issuer. */
export async function findWebhook(db: Db, webhookId: string, issuerId?: string): Promise<Webhook> {
  const webhook = await db.webhook.findUnique({ where: { id: webhookId } });
  if (!webhook || (issuerId !== undefined && webhook.issuerId !== issuerId)) {
    throw errors.notFound('webhook_not_found', `No webhook ${webhookId}.`);
  }
  return webhook;
}

export async function webhookWithAttempts(db: Db, webhook: Webhook) {
  const [summary] = await sqlQuery<WebhookSummary[]>(
    db,
    Prisma.sql`SELECT ${WEBHOOK_COLUMNS}, ${SUMMARY} FROM webhook w WHERE w.id = ${webhook.id}`,
  );
  const [deliveries, attempts] = await Promise.all([
    db.webhookDelivery.findMany({ where: { webhookId: webhook.id }, orderBy: { createdAt: 'asc' } }),
    db.webhookAttempt.findMany({
      where: { webhookId: webhook.id },
      orderBy: [{ startedAt: 'asc' }, { attemptNumber: 'asc' }],
    }),
  ]);
  return {
    ...presentWebhook(summary),
    deliveries: deliveries.map((d) =>
      presentDelivery(
        d,
        attempts.filter((a) => a.endpointId === d.endpointId),
      ),
    ),
    attempts: attempts.map(presentAttempt),
  };
}
