// The step shape of TransactionLifecycle runs started before the lean pipeline (their input
// has no `shape`), kept so that those runs (an authorization may wait 10 days for its
// settlement, a refund may start a new run later) replay and finish on the new code. Each step: an upsert of the transaction ids when an event joins,
// a regular activity, an upsert of the outcome, and a startWebhookDelivery activity (now a
// no-op: the outbox relay delivers every webhook). Delete this file, its branch in
// transaction-lifecycle.ts and the v1 histories once no run of the old shape is open (docs/operating/upgrading.md,
// "Changing a workflow that waits for days").
import { ActivityFailure, proxyActivities, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { LifecycleActivities, StepOutcome } from '../activities/lifecycle/types';
import type { DeliveryStarter } from '../activities/webhooks/start-delivery';
import { bookkeepingOptions, postingOptions } from './activity-options';
import type { LifecycleRecord, StepRunner } from './lifecycle-steps';
import { stepInput } from './lifecycle-steps';
import { RewardsMerchantId, RewardsStatus, RewardsTransactionId } from './search-attributes';

const posting = proxyActivities<LifecycleActivities>(postingOptions);
const bookkeeping = proxyActivities<Pick<LifecycleActivities, 'markUnknown'> & DeliveryStarter>(bookkeepingOptions);

export function stepsV1(record: LifecycleRecord): StepRunner {
  const markUnknown = async (
    step: { signal: LifecycleRecord['summary']['steps'][number]['signal']; eventId: string },
    reason: string,
  ) => {
    await bookkeeping.markUnknown({ eventId: step.eventId, reason, workflowId: workflowInfo().workflowId });
    record.summary.steps.push({ ...step, status: 'unknown' });
    upsertSearchAttributes([{ key: RewardsStatus, value: 'unknown' }]);
  };

  return {
    take(eventId) {
      if (record.transactionIds.includes(eventId)) return;
      record.transactionIds.push(eventId);
      upsertSearchAttributes([{ key: RewardsTransactionId, value: [...record.transactionIds] }]);
      record.publishedIds = [...record.transactionIds];
    },
    async run(step, activity, options) {
      try {
        const outcome: StepOutcome = await posting[activity](stepInput(step));
        record.summary.steps.push({ ...step, status: outcome.status });
        if (outcome.clockOffsetMs !== undefined) record.clockOffsetMs = outcome.clockOffsetMs;
        if (!options?.keepStatus) {
          upsertSearchAttributes([
            { key: RewardsStatus, value: outcome.status },
            ...(outcome.merchantId ? [{ key: RewardsMerchantId, value: outcome.merchantId }] : []),
          ]);
        }
        if (outcome.webhookId) await bookkeeping.startWebhookDelivery({ webhookId: outcome.webhookId });
        return outcome.status;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        await markUnknown(step, err.cause?.message ?? err.message);
        return 'unknown';
      }
    },
    markUnknown,
  };
}
