// An event whose processing failed for good is marked `unknown`: it awaits an operator,
// who fixes the cause and reprocesses it (POST /admin/v1/transactions/{txnId}/reprocess).
import type { LifecycleDeps } from './deps';

/** Marks the event `unknown`; true when it was (committed), false when it had finished meanwhile. */
export async function markUnknown(
  deps: LifecycleDeps,
  input: { eventId: string; reason: string; workflowId: string },
): Promise<boolean> {
  // Never overwrite a finished outcome: a late failure report must not hide posted effects.
  const { count } = await deps.db.ingestedEvent.updateMany({
    where: { id: input.eventId, processedAt: null },
    data: { rewardStatus: 'unknown', failureReason: input.reason.slice(0, 1000) },
  });
  deps.logger.error(
    { eventId: input.eventId, workflowId: input.workflowId, reason: input.reason },
    'event processing failed; marked unknown',
  );
  return count > 0;
}
