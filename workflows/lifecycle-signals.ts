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

export interface LifecycleInput {
  issuerId: string;
  /** How long a previewed authorization waits for its settlement; default 10 days. */
  settlementTimeoutMs?: number;
}

export const LIFECYCLE_WORKFLOW_TYPE = 'transactionLifecycle';
