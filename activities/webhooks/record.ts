// Writes a webhook record (`evt_`) in the caller's transaction, so a webhook exists exactly
// when the effects it announces were committed. Idempotent by (type, source event).
import { newId } from '../../core/ids';
import type { Prisma } from '../../prisma/generated/client';

export type WebhookType = 'qualified_auth' | 'qualified_settlement';

export async function recordWebhook(
  tx: Prisma.TransactionClient,
  input: { issuerId: string; type: WebhookType; sourceEventId: string; data: Record<string, unknown>; at: Date },
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
      data: { ...input.data, webhookId: id } as Prisma.InputJsonValue,
      createdAt: input.at,
      updatedAt: input.at,
    },
  });
  return id;
}
