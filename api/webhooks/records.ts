// Webhook records as issuers see them: a page of their webhooks, one webhook with every
// attempt. Another issuer's webhook is "not found", exactly like a missing one.
import { errors } from '../../core/errors';
import type { Db } from '../../prisma/client';
import type { Webhook, WebhookAttempt } from '../../prisma/generated/client';
import { cursorDate, decodeCursor, toPage } from '../pagination';
import type { WebhookListQuery } from './schemas';

const iso = (d: Date | null) => d?.toISOString() ?? null;

export function presentWebhook(webhook: Webhook) {
  return {
    webhookId: webhook.id,
    type: webhook.type,
    status: webhook.status,
    attemptCount: webhook.attemptCount,
    lastAttemptAt: iso(webhook.lastAttemptAt),
    nextAttemptAt: iso(webhook.nextAttemptAt),
    deliveredAt: iso(webhook.deliveredAt),
    createdAt: webhook.createdAt.toISOString(),
    data: webhook.data,
  };
}

export function presentAttempt(attempt: WebhookAttempt) {
  return {
    attemptNumber: attempt.attemptNumber,
    startedAt: attempt.startedAt.toISOString(),
    statusCode: attempt.statusCode,
    latencyMs: attempt.latencyMs,
    outcome: attempt.outcome,
    errorClass: attempt.errorClass,
    error: attempt.error,
  };
}

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
