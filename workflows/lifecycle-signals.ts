// The signals of the TransactionLifecycle workflow. Clients (the API's hand-over and the
// sweeper) import these definitions, so the names live in one place.
import { defineSignal } from '@temporalio/workflow';

/** Every signal carries only the stored event's id; activities read the event itself. */
export interface EventSignal {
  eventId: string;
}

export const authorizationSignal = defineSignal<[EventSignal]>('authorization');
export const reversalSignal = defineSignal<[EventSignal]>('reversal');
export const settlementSignal = defineSignal<[EventSignal]>('settlement');
export const refundSignal = defineSignal<[EventSignal]>('refund');

export type LifecycleSignalName = 'authorization' | 'reversal' | 'settlement' | 'refund';

/**
 * An operator re-runs a step whose event ended `unknown`. Unlike the event signals it is
 * not de-duplicated by event id (the event was seen before); `requestId` makes each
 * reprocess request count once. The step's activity is idempotent, so nothing posts twice.
 */
export interface ReprocessSignal {
  eventId: string;
  step: LifecycleSignalName;
  requestId: string;
}
export const reprocessSignal = defineSignal<[ReprocessSignal]>('reprocess');

export interface LifecycleInput {
  issuerId: string;
  /** How long a previewed authorization waits for its settlement; default 10 days. */
  settlementTimeoutMs?: number;
}

export const LIFECYCLE_WORKFLOW_TYPE = 'transactionLifecycle';
