// TransactionLifecycle: one workflow per purchase (workflow id txn/<issuer>/<auth or
// settlement id>), driven by signals that carry stored event ids.
//
//   1. authorization  → preview the reward (no ledger posting), request qualified_auth.
//   2. wait for settlement, at most settlementTimeoutMs (default 10 days); a reversal
//      voids the preview, the time-out lapses it.
//   3. settlement     → match, eligibility, spend branded balance, post earn transfers,
//      reward events and grants in one database transaction; request qualified_settlement.
//   4. refund         → claw back in proportion to the refunded amount (compensates 3).
//   5. finish when nothing is pending; a later refund starts a new run with the same id,
//      and the activities read what earlier runs posted from the database.
// An activity that fails for good marks its event `unknown` for an operator to reprocess
// (the `reprocess` signal re-runs that step; its activity is idempotent).
// A step that wrote a webhook record starts its WebhookDelivery workflow (webhook/<evt id>)
// through an activity: the purchase may finish long before the delivery's retries do.
import { ActivityFailure, condition, proxyActivities, setHandler, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { LifecycleActivities, StepOutcome } from '../activities/lifecycle/types';
import type { DeliveryStarter } from '../activities/webhooks/start-delivery';
import { bookkeepingOptions, postingOptions } from './activity-options';
import {
  authorizationSignal,
  refundSignal,
  reprocessSignal,
  reversalSignal,
  settlementSignal,
  type EventSignal,
  type LifecycleInput,
  type LifecycleSignalName,
} from './lifecycle-signals';
import { RewardsMerchantId, RewardsStatus, RewardsTransactionId } from './search-attributes';

const posting = proxyActivities<LifecycleActivities>(postingOptions);
const bookkeeping = proxyActivities<Pick<LifecycleActivities, 'markUnknown'> & DeliveryStarter>(bookkeepingOptions);

export const DEFAULT_SETTLEMENT_TIMEOUT_MS = 10 * 24 * 60 * 60 * 1000;
// A refund whose purchase has not been settled yet waits for it, but not forever.
const REFUND_WAIT_MS = 60 * 60 * 1000;
const MAX_REFUND_WAITS = 72;

interface Pending {
  signal: LifecycleSignalName;
  eventId: string;
}

export interface LifecycleSummary {
  steps: Array<{ signal: LifecycleSignalName; eventId: string; status: string }>;
}

// Settlements go before refunds, so a refund in the same batch as its purchase finds it posted.
const PRIORITY: Record<LifecycleSignalName, number> = { authorization: 0, reversal: 1, settlement: 2, refund: 3 };

export async function transactionLifecycle(input: LifecycleInput): Promise<LifecycleSummary> {
  const inbox: Pending[] = [];
  const seen = new Set<string>();
  const receive = (signal: LifecycleSignalName) => (e: EventSignal) => {
    const key = `${signal}:${e.eventId}`;
    if (seen.has(key)) return; // a hand-over repeated by the sweeper
    seen.add(key);
    inbox.push({ signal, eventId: e.eventId });
  };
  setHandler(authorizationSignal, receive('authorization'));
  setHandler(reversalSignal, receive('reversal'));
  setHandler(settlementSignal, receive('settlement'));
  setHandler(refundSignal, receive('refund'));
  setHandler(reprocessSignal, (r) => {
    const key = `reprocess:${r.requestId}`;
    if (seen.has(key)) return;
    seen.add(key);
    inbox.push({ signal: r.step, eventId: r.eventId });
  });

  const timeoutMs = input.settlementTimeoutMs ?? DEFAULT_SETTLEMENT_TIMEOUT_MS;
  const summary: LifecycleSummary = { steps: [] };
  const transactionIds: string[] = [];
  let previewOf: string | undefined;
  let settledCount = 0;
  let deferredRefunds: Pending[] = [];
  let refundWaits = 0;

  for (;;) {
    const next = takeNext(inbox);
    if (!next) {
      if (previewOf && settledCount === 0) {
        if (!(await condition(() => inbox.length > 0, timeoutMs))) {
          await run({ signal: 'authorization', eventId: previewOf }, () => posting.lapsePreview(step({ signal: 'authorization', eventId: previewOf! })));
          previewOf = undefined;
        }
        continue;
      }
      if (deferredRefunds.length > 0 && refundWaits < MAX_REFUND_WAITS) {
        refundWaits++;
        await condition(() => inbox.length > 0, REFUND_WAIT_MS);
        inbox.push(...deferredRefunds);
        deferredRefunds = [];
        continue;
      }
      for (const refund of deferredRefunds) await markUnknown(refund, 'the refunded purchase was never settled');
      break;
    }
    if (!transactionIds.includes(next.eventId)) {
      transactionIds.push(next.eventId);
      upsertSearchAttributes([{ key: RewardsTransactionId, value: [...transactionIds] }]);
    }
    switch (next.signal) {
      case 'authorization':
        if (settledCount === 0 && (await run(next, () => posting.previewAuthorization(step(next)))) === 'previewed') {
          previewOf = next.eventId;
        }
        break;
      case 'reversal':
        if (settledCount === 0) await run(next, () => posting.voidPreview(step(next)));
        previewOf = undefined;
        break;
      case 'settlement':
        await run(next, () => posting.settleTransaction(step(next)));
        settledCount++;
        previewOf = undefined;
        inbox.push(...deferredRefunds);
        deferredRefunds = [];
        break;
      case 'refund':
        if ((await run(next, () => posting.clawBackRefund(step(next)))) === 'waiting_for_purchase') {
          deferredRefunds.push(next);
        }
        break;
    }
  }
  return summary;

  async function run(step: Pending, activity: () => Promise<StepOutcome>): Promise<string> {
    try {
      const outcome = await activity();
      summary.steps.push({ ...step, status: outcome.status });
      upsertSearchAttributes([
        { key: RewardsStatus, value: outcome.status },
        ...(outcome.merchantId ? [{ key: RewardsMerchantId, value: outcome.merchantId }] : []),
      ]);
      if (outcome.webhookId) await bookkeeping.startWebhookDelivery({ webhookId: outcome.webhookId });
      return outcome.status;
    } catch (err) {
      if (!(err instanceof ActivityFailure)) throw err;
      await markUnknown(step, err.cause?.message ?? err.message);
      return 'unknown';
    }
  }

  async function markUnknown(step: Pending, reason: string): Promise<void> {
    await bookkeeping.markUnknown({ eventId: step.eventId, reason, workflowId: workflowInfo().workflowId });
    summary.steps.push({ ...step, status: 'unknown' });
    upsertSearchAttributes([{ key: RewardsStatus, value: 'unknown' }]);
  }
}

// Activities get the workflow's clock: it is the same on every retry of a step, and
// time-skipping tests move it (availability and expiry dates are computed from it).
function step(pending: Pending) {
  return { eventId: pending.eventId, atMs: Date.now() };
}

function takeNext(inbox: Pending[]): Pending | undefined {
  if (inbox.length === 0) return undefined;
  let best = 0;
  for (let i = 1; i < inbox.length; i++) if (PRIORITY[inbox[i].signal] < PRIORITY[inbox[best].signal]) best = i;
  return inbox.splice(best, 1)[0];
}
