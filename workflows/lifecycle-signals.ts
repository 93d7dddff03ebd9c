// The signals of the TransactionLifecycle workflow. Clients (the API's hand-over and the
// sweeper) import these definitions, so the names live in one place.
import { defineSignal, type Sinks } from '@temporalio/workflow';

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

/**
 * A sandbox issuer moved its test clock (POST /api/v2/sandbox/clock/advance). Carries the
 * issuer's whole offset, not the step: a repeated or reordered signal changes nothing, and a
 * run that missed one catches up on the next (workflows/sandbox-clock.ts).
 */
export interface ClockAdvancedSignal {
  clockOffsetMs: number;
}
export const clockAdvancedSignal = defineSignal<[ClockAdvancedSignal]>('clockAdvanced');

/** A run whose input has no settlementTimeoutMs (started before it was configurable) waits this. */
export const DEFAULT_SETTLEMENT_TIMEOUT_MS = 10 * 24 * 60 * 60 * 1000;

export interface LifecycleInput {
  issuerId: string;
  /**
   * How long a previewed authorization waits for its settlement (SETTLEMENT_TIMEOUT). Fixed at
   * the run's start, so a changed setting applies to new purchases only.
   */
  settlementTimeoutMs?: number;
  /**
   * The step shape the run was started with, for its whole life (docs/operating/upgrading.md,
   * "Changing a workflow that waits for days"). Absent in runs started before the lean pipeline: they finish in
   * their own shape (workflows/lifecycle-steps-v1.ts) while new runs take the current one.
   */
  shape?: number;
}

/** 2: each step one local activity and one upsert, webhooks through the outbox relay. */
export const LIFECYCLE_SHAPE = 2;

/** The input every starter of a new run passes (hand-over, sweeper, reprocess, tests). */
export function lifecycleInput(issuerId: string, settlementTimeoutMs: number): LifecycleInput {
  // The workflow would wait NaN or forever on a bad value; config validates it, this guards callers.
  if (!Number.isSafeInteger(settlementTimeoutMs) || settlementTimeoutMs <= 0) {
    throw new RangeError(`settlementTimeoutMs must be a positive integer (got ${settlementTimeoutMs})`);
  }
  return { issuerId, shape: LIFECYCLE_SHAPE, settlementTimeoutMs };
}

export const LIFECYCLE_WORKFLOW_TYPE = 'transactionLifecycle';

/**
 * What the lifecycle tells its worker besides commands: `idle` when it has nothing left to do, so
 * the events it processed give their places under the hand-over bound back
 * (worker/handover-release.ts); `closes` when the run is about to complete rather than wait.
 */
export interface HandoverSinks extends Sinks {
  handover: { idle(closes: boolean): void };
}
