// TransactionLifecycle: one workflow per purchase (workflow id txn/<issuer>/<auth or
// settlement id>), driven by signals that carry stored event ids.
//
//   1. authorization  → preview the reward (no ledger posting), write qualified_auth.
//   2. wait for settlement, at most input.settlementTimeoutMs (SETTLEMENT_TIMEOUT); a reversal
//      voids the preview, the time-out lapses it. A sandbox issuer's test clock shortens the
//      wait (clockAdvanced signal, workflows/sandbox-clock.ts).
//   3. settlement     → match, eligibility, spend branded balance, post earn transfers,
//      reward events and grants in one database transaction; write qualified_settlement.
//   4. refund         → claw back in proportion to the refunded amount (compensates 3).
//   5. finish when nothing is pending; a later refund starts a new run with the same id,
//      and the activities read what earlier runs posted from the database.
// Each step is one local activity and one search-attribute upsert (lifecycle-steps.ts);
// runs started before that shape keep theirs (lifecycle-steps-v1.ts, chosen by input.shape).
// An authorization that arrives after its settlement is recorded against it, with no
// preview (the step finds the settlement; a new run for it ends at once).
// An activity that fails for good marks its event `unknown` for an operator to reprocess
// (the `reprocess` signal re-runs that step; its activity is idempotent).
// Whenever it has nothing left to do (it closes, or waits for its next event) it tells the worker,
// which gives the events it processed their places under the hand-over bound back
// (worker/handover-release.ts); the call is no command, so histories replay unchanged.
// Webhook records written by a step sit in the outbox; the worker's relay delivers them and
// hands a failing one to its own WebhookDelivery workflow, so the purchase never waits on
// a receiver.
import { condition, patched, proxySinks, setHandler } from '@temporalio/workflow';
import {
  DEFAULT_SETTLEMENT_TIMEOUT_MS,
  authorizationSignal,
  refundSignal,
  reprocessSignal,
  reversalSignal,
  settlementSignal,
  type EventSignal,
  type HandoverSinks,
  type LifecycleInput,
  type LifecycleSignalName,
} from './lifecycle-signals';
import { leanSteps, newLifecycleRecord, type LifecycleSummary, type Pending } from './lifecycle-steps';
import { stepsV1 } from './lifecycle-steps-v1';
import { followIssuerClock, waitOnIssuerClock } from './sandbox-clock';

export type { LifecycleSummary } from './lifecycle-steps';

// A refund whose purchase has not been settled yet waits for it, but not forever.
const REFUND_WAIT_MS = 60 * 60 * 1000;
const MAX_REFUND_WAITS = 72;

// Runs that took an authorization after their settlement before this change skipped it.
const LATE_AUTHORIZATION_PATCH = 'record-late-authorization';

const { handover } = proxySinks<HandoverSinks>();

// Settlements go before refunds, so a refund in the same batch as its purchase finds it posted.
const PRIORITY: Record<LifecycleSignalName, number> = { authorization: 0, reversal: 1, settlement: 2, refund: 3 };

export async function transactionLifecycle(input: LifecycleInput): Promise<LifecycleSummary> {
  const inbox = receiveEvents();
  const issuerClock = followIssuerClock();

  const timeoutMs = input.settlementTimeoutMs ?? DEFAULT_SETTLEMENT_TIMEOUT_MS;
  const record = newLifecycleRecord();
  // The shape is fixed at start (its input is in the history): a run never changes shape, so
  // new runs carry no patch marker, and runs started before the lean pipeline finish as v1.
  const steps = (input.shape ?? 1) >= 2 ? leanSteps(record) : stepsV1(record);
  let previewOf: string | undefined;
  let settledCount = 0;
  let deferredRefunds: Pending[] = [];
  let refundWaits = 0;
  let tookSinceIdle = false;

  for (;;) {
    const next = takeNext(inbox);
    if (!next) {
      const previewWaiting = settledCount === 0 ? previewOf : undefined;
      const waitsForPurchase = deferredRefunds.length > 0 && refundWaits < MAX_REFUND_WAITS;
      if (tookSinceIdle) handover.idle(previewWaiting === undefined && !waitsForPurchase);
      tookSinceIdle = false;
      if (previewWaiting !== undefined) {
        if (!(await waitOnIssuerClock(() => inbox.length > 0, timeoutMs, issuerClock, record.clockOffsetMs ?? 0))) {
          await steps.run({ signal: 'authorization', eventId: previewWaiting }, 'lapsePreview');
          previewOf = undefined;
        }
        continue;
      }
      if (waitsForPurchase) {
        refundWaits++;
        await condition(() => inbox.length > 0, REFUND_WAIT_MS);
        inbox.push(...deferredRefunds);
        deferredRefunds = [];
        continue;
      }
      for (const refund of deferredRefunds) await steps.markUnknown(refund, 'the refunded purchase was never settled');
      break;
    }
    steps.take(next.eventId);
    tookSinceIdle = true;
    switch (next.signal) {
      case 'authorization':
        if (settledCount === 0) {
          if ((await steps.run(next, 'previewAuthorization')) === 'previewed') previewOf = next.eventId;
        } else if (patched(LATE_AUTHORIZATION_PATCH)) {
          // It came after its settlement: the step records it against the settlement (no
          // preview, no webhook) and leaves the purchase's status as the settlement set it.
          await steps.run(next, 'previewAuthorization', { keepStatus: true });
        }
        break;
      case 'reversal':
        if (settledCount === 0) await steps.run(next, 'voidPreview');
        previewOf = undefined;
        break;
      case 'settlement':
        await steps.run(next, 'settleTransaction');
        settledCount++;
        previewOf = undefined;
        inbox.push(...deferredRefunds);
        deferredRefunds = [];
        break;
      case 'refund':
        if ((await steps.run(next, 'clawBackRefund')) === 'waiting_for_purchase') {
          deferredRefunds.push(next);
        }
        break;
    }
  }
  return record.summary;
}

/**
 * Registers the event and reprocess signal handlers and returns the inbox they fill, each
 * event once: the sweeper may hand the same event over again, and an operator's reprocess
 * request may be sent twice.
 */
function receiveEvents(): Pending[] {
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
  return inbox;
}

function takeNext(inbox: Pending[]): Pending | undefined {
  if (inbox.length === 0) return undefined;
  let best = 0;
  for (let i = 1; i < inbox.length; i++) if (PRIORITY[inbox[i].signal] < PRIORITY[inbox[best].signal]) best = i;
  return inbox.splice(best, 1)[0];
}
