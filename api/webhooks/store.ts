// An issuer's webhook endpoint (create or replace it, read it, rotate its secret) and the
// webhook records. The secret is returned when it is made (creation, rotation) and never
// again; it is stored sealed under WEBHOOK_SECRET_KEYS (core/webhooks/secret-sealing.ts).
import { errors } from '../../core/errors';
import type { Db } from '../../prisma/client';
import type { Webhook } from '../../prisma/generated/client';
import { cursorDate, decodeCursor, toPage } from '../pagination';
import type { WebhookListQuery } from './schemas';
import { presentAttempt, presentWebhook } from './present';

// Webhook records as issuers see them: a page of their webhooks, one webhook with every
// attempt. Another issuer's webhook is "not found", exactly like a missing one.

/** Newest first, keyed by (createdAt, id) like the list index. */
export async function listWebhooks(db: Db, issuerId: string, query: WebhookListQuery) {
  const after = decodeCursor(query.cursor, 2);
  const rows = await db.webhook.findMany({
    where: {
      issuerId,
      ...(query.status ? { status: query.status } : {}),
      ...(query.type ? { type: query.type } : {}),
      ...(after
        ? {
            OR: [
              { createdAt: { lt: cursorDate(after[0]) } },
              { createdAt: cursorDate(after[0]), id: { lt: String(after[1]) } },
            ],
          }
        : {}),
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.limit + 1,
  });
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
  const attempts = await db.webhookAttempt.findMany({
    where: { webhookId: webhook.id },
    orderBy: { attemptNumber: 'asc' },
  });
  return { ...presentWebhook(webhook), attempts: attempts.map(presentAttempt) };
}
