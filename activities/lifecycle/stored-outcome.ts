// The outcome of an event that was already processed, read back for a retried activity.
import type { IngestedEvent, Prisma } from '../../prisma/generated/client';
import type { StepOutcome, StepStatus } from './types';

export async function storedOutcome(tx: Prisma.TransactionClient, event: IngestedEvent): Promise<StepOutcome> {
  const webhook = await tx.webhook.findFirst({ where: { sourceEventId: event.id }, select: { id: true } });
  return { status: event.rewardStatus as StepStatus, merchantId: event.merchantId ?? undefined, webhookId: webhook?.id };
}
