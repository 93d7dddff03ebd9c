// The outcome of an event that was already processed, read back for a retried activity.
import type { IngestedEvent } from '../../prisma/generated/client';
import type { SqlTx } from '../../prisma/sql-transaction';
import type { StepOutcome, StepStatus } from './types';

export async function storedOutcome(tx: SqlTx, event: IngestedEvent): Promise<StepOutcome> {
  const [webhook] = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM webhook WHERE source_event_id = ${event.id} LIMIT 1`;
  return {
    status: event.rewardStatus as StepStatus,
    merchantId: event.merchantId ?? undefined,
    webhookId: webhook?.id,
  };
}
