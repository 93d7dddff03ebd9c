// The WebhookDelivery activities: one signed HTTP attempt, recorded with the webhook's new
// status in one database transaction. Idempotent per (webhookId, attemptNumber): an attempt
// already recorded is returned as it was, never sent or recorded again.
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';
import type { WebhookEndpoint } from '../../prisma/generated/client';
import { buildEnvelope } from '../../core/webhooks/envelope';
import { signatureHeaders } from '../../core/webhooks/signing';
import { sendWebhook, MAX_ATTEMPT_ERROR_LENGTH } from './send';
import { webhookAttempts } from '../../core/metrics';
import type { AttemptInput, AttemptResult, WebhookActivities } from './types';

export interface WebhookDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** Tests only: a shorter HTTP time-out than the contract's 10 s. */
  webhookAttemptTimeoutMs?: number;
}

/** Error classes of attempts that never reached HTTP because nothing can be delivered. */
const UNDELIVERABLE_CLASSES = new Set(['not_configured', 'type_not_enabled']);

interface AttemptRecord {
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  outcome: 'succeeded' | 'failed';
  error: string | null;
}

export function createWebhookActivities(deps: WebhookDeps): WebhookActivities {
  const { db } = deps;
  return {
    async attemptWebhookDelivery(input) {
      const webhook = await db.webhook.findUnique({ where: { id: input.webhookId } });
      if (!webhook) return { outcome: 'not_found' };
      const recorded = await recordedAttempt(db, input);
      if (recorded) return recorded;
      if (!input.replay && webhook.status === 'delivered') return { outcome: 'already_delivered' };

      const startedAt = deps.clock.now();
      const endpoint = await db.webhookEndpoint.findUnique({ where: { issuerId: webhook.issuerId } });
      const reason = undeliverableReason(endpoint, webhook.type);
      if (reason || !endpoint) {
        return record(db, input, { startedAt, statusCode: null, latencyMs: 0, outcome: 'failed', error: reason });
      }
      await db.webhook.update({ where: { id: webhook.id }, data: { status: 'delivering', updatedAt: startedAt } });
      // Secrets and URL are read at every attempt, so a rotation or a new URL applies to retries.
      const body = buildEnvelope(webhook);
      const sent = await sendWebhook(endpoint.url, { ...signatureHeaders(endpoint, webhook.id, body, startedAt) }, body, deps.webhookAttemptTimeoutMs);
      deps.logger.info({ webhookId: webhook.id, attemptNumber: input.attemptNumber, statusCode: sent.statusCode, ok: sent.ok }, 'webhook attempt');
      return record(db, input, { startedAt, statusCode: sent.statusCode, latencyMs: sent.latencyMs, outcome: sent.ok ? 'succeeded' : 'failed', error: sent.error });
    },

    async recordLostWebhookAttempt(input) {
      if (!(await db.webhook.findUnique({ where: { id: input.webhookId }, select: { id: true } }))) return { outcome: 'not_found' };
      const error = `attempt_lost: ${input.error}`.slice(0, MAX_ATTEMPT_ERROR_LENGTH);
      return record(db, input, { startedAt: deps.clock.now(), statusCode: null, latencyMs: 0, outcome: 'failed', error });
    },
  };
}

function undeliverableReason(endpoint: WebhookEndpoint | null, type: string): string | null {
  if (!endpoint) return 'not_configured: the issuer has no webhook endpoint (PUT /api/v2/webhook-endpoint, then replay)';
  if (!endpoint.enabledTypes.includes(type)) return `type_not_enabled: the webhook endpoint does not enable ${type}`;
  return null;
}

/** Writes the attempt and the webhook's new state; a second write of the same attempt loses. */
async function record(db: Db, input: AttemptInput, attempt: AttemptRecord): Promise<AttemptResult> {
  const result = resultOf(attempt);
  const final = result.outcome !== 'failed' || input.nextAttemptInMs === null;
  const status = result.outcome === 'succeeded' ? 'delivered' : final ? 'failed' : 'delivering';
  const written = await db.$transaction(async (tx) => {
    const { count } = await tx.webhookAttempt.createMany({
      data: [{ id: `${input.webhookId}/attempt/${input.attemptNumber}`, webhookId: input.webhookId, attemptNumber: input.attemptNumber, ...attempt }],
      skipDuplicates: true,
    });
    if (count === 0) return false;
    // The guard keeps a late record of an older attempt from overwriting a newer state.
    await tx.webhook.updateMany({
      where: { id: input.webhookId, attemptCount: { lt: input.attemptNumber } },
      data: {
        status,
        attemptCount: input.attemptNumber,
        lastAttemptAt: attempt.startedAt,
        nextAttemptAt: final ? null : new Date(attempt.startedAt.getTime() + attempt.latencyMs + input.nextAttemptInMs!),
        ...(status === 'delivered' ? { deliveredAt: attempt.startedAt } : {}),
        updatedAt: attempt.startedAt,
      },
    });
    return true;
  });
  if (!written) return (await recordedAttempt(db, input))!;
  webhookAttempts.inc({ outcome: result.outcome });
  return result;
}

async function recordedAttempt(db: Db, input: AttemptInput): Promise<AttemptResult | undefined> {
  const row = await db.webhookAttempt.findUnique({
    where: { webhookId_attemptNumber: { webhookId: input.webhookId, attemptNumber: input.attemptNumber } },
  });
  return row ? resultOf({ ...row, outcome: row.outcome as AttemptRecord['outcome'] }) : undefined;
}

function resultOf(attempt: Pick<AttemptRecord, 'outcome' | 'statusCode' | 'error'>): AttemptResult {
  const errorClass = attempt.error?.split(':', 1)[0] ?? '';
  const outcome = attempt.outcome === 'succeeded' ? 'succeeded' : UNDELIVERABLE_CLASSES.has(errorClass) ? 'undeliverable' : 'failed';
  return { outcome, statusCode: attempt.statusCode, error: attempt.error };
}
