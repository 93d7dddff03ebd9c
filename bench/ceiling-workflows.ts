// The "ceiling": workflows of the same shape as a settled purchase, with empty bodies.
// Real path (workflows/transaction-lifecycle.ts + webhook-delivery.ts), per settled event:
//   signalWithStart(lifecycle) → upsert RewardsTransactionId → settleTransaction activity
//   → upsert RewardsStatus/RewardsMerchantId → startWebhookDelivery activity (a client
//   start of the delivery workflow) → lifecycle ends; delivery: one attempt activity → ends.
// These mirror every step (same signals, upserts, activities, start pattern) and do no work,
// so their rate on the same Temporal server is what Temporal itself allows.
// Deterministic code only: imports @temporalio/workflow and types.
import { condition, defineSignal, proxyActivities, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import type { CeilingActivities } from './ceiling-activities';
import { RewardsMerchantId, RewardsStatus, RewardsTransactionId } from '../workflows/search-attributes';

const activities = proxyActivities<CeilingActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5 },
});

export const ceilingSettlementSignal = defineSignal<[{ eventId: string }]>('settlement');

export async function ceilingLifecycle(): Promise<void> {
  const inbox: string[] = [];
  setHandler(ceilingSettlementSignal, ({ eventId }) => void inbox.push(eventId));
  // One signal per workflow here, as for a settlement without a prior authorization; the
  // bound keeps the loop finite whatever arrives.
  for (let handled = 0; handled < 1000; handled++) {
    if (!(await condition(() => inbox.length > 0, '1 minute'))) return;
    const eventId = inbox.shift()!;
    upsertSearchAttributes([{ key: RewardsTransactionId, value: [eventId] }]);
    const outcome = await activities.ceilingSettle({ eventId });
    upsertSearchAttributes([
      { key: RewardsStatus, value: outcome.status },
      { key: RewardsMerchantId, value: outcome.merchantId },
    ]);
    await activities.ceilingStartDelivery({ webhookId: outcome.webhookId });
    if (inbox.length === 0) return;
  }
}

export async function ceilingDelivery(input: { webhookId: string }): Promise<void> {
  await activities.ceilingAttempt(input);
}
