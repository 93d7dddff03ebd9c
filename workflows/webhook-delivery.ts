// WebhookDelivery: one workflow per delivery run of a webhook to one endpoint (workflow id
// webhook/<evt id>/<whe id>; a replay runs as webhook/<evt id>/<whe id>/replay/<first attempt
// number>; runs started before endpoints had ids are webhook/<evt id> and name no endpoint).
//
//   0. a run started by the relay after its failed first attempt waits the first entry of the
//      schedule, then continues with attempt 2 (resumeAfterAttempt).
//   1. attempt   → one HTTP POST per activity execution (10 s time-out, no activity retry),
//                  recorded in webhook_attempt with the webhook row's new status.
//   2. on failure, wait for the next entry of the retry schedule (a durable timer, so the
//      wait survives worker and Temporal restarts), then attempt again.
//   3. stop at the first 2xx (delivered), when the webhook cannot be delivered (no endpoint,
//      type not enabled), when the endpoint was disabled or deleted (skipped: no attempt, no
//      further timer), or after the last entry (failed; replayable).
// Nothing compensates: a request that reached the receiver cannot be taken back, so
// receivers deduplicate by the webhook-id header (SPEC.md section 6).
import { ActivityFailure, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { AttemptInput, AttemptResult, WebhookActivities } from '../activities/webhooks/types';
import { INVALID_WEBHOOK_SCHEDULE } from '../core/failure-types';
import { bookkeepingOptions, webhookAttemptOptions } from './activity-options';
import {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  MAX_WEBHOOK_RETRIES,
  MAX_WEBHOOK_RETRY_WAIT_MS,
  type WebhookDeliveryInput,
  type WebhookDeliveryResult,
} from './webhook-delivery-contract';

const attempts = proxyActivities<Pick<WebhookActivities, 'attemptWebhookDelivery'>>(webhookAttemptOptions);
const bookkeeping = proxyActivities<Pick<WebhookActivities, 'recordLostWebhookAttempt'>>(bookkeepingOptions);

export async function webhookDelivery(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  const schedule = checkedSchedule(input.retryScheduleMs ?? [...DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS]);
  const resumed = checkedResume(input.resumeAfterAttempt ?? 0, schedule);
  const first = input.firstAttemptNumber ?? resumed + 1;
  const result = (status: WebhookDeliveryResult['status'], made: number): WebhookDeliveryResult => ({
    webhookId: input.webhookId,
    status,
    attempts: made,
  });

  if (resumed > 0) await sleep(schedule[resumed - 1]);
  for (let i = resumed; i <= schedule.length; i++) {
    const made = i - resumed;
    const nextAttemptInMs = i < schedule.length ? schedule[i] : null;
    const outcome = await attemptOnce({
      webhookId: input.webhookId,
      ...(input.endpointId === undefined ? {} : { endpointId: input.endpointId }),
      attemptNumber: first + made,
      nextAttemptInMs,
      replay: input.replay ?? false,
    });
    switch (outcome.outcome) {
      case 'succeeded':
        return result('delivered', made + 1);
      case 'undeliverable':
        return result('failed', made + 1);
      case 'skipped':
        return result('skipped', made);
      case 'already_delivered':
      case 'not_found':
        return result(outcome.outcome, made);
      case 'failed':
        if (nextAttemptInMs === null) return result('failed', made + 1);
        await sleep(nextAttemptInMs);
    }
  }
  throw new Error('unreachable: the loop returns on its last attempt');
}

async function attemptOnce(input: AttemptInput): Promise<AttemptResult> {
  try {
    return await attempts.attemptWebhookDelivery(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // The activity was lost (worker stopped mid-request, start-to-close time-out). It still
    // counts as an attempt: recorded as failed unless its own record made it to the database.
    return bookkeeping.recordLostWebhookAttempt({ ...input, error: err.cause?.message ?? err.message });
  }
}

function checkedResume(resumed: number, schedule: number[]): number {
  if (!Number.isInteger(resumed) || resumed < 0 || resumed > schedule.length) {
    throw ApplicationFailure.nonRetryable(
      `resumeAfterAttempt must be an integer of 0..${schedule.length}`,
      INVALID_WEBHOOK_SCHEDULE,
    );
  }
  return resumed;
}

function checkedSchedule(schedule: number[]): number[] {
  const valid =
    schedule.length <= MAX_WEBHOOK_RETRIES &&
    schedule.every((ms) => Number.isInteger(ms) && ms >= 0 && ms <= MAX_WEBHOOK_RETRY_WAIT_MS);
  if (!valid) {
    throw ApplicationFailure.nonRetryable(
      `retryScheduleMs must hold at most ${MAX_WEBHOOK_RETRIES} integer waits of 0..${MAX_WEBHOOK_RETRY_WAIT_MS} ms`,
      INVALID_WEBHOOK_SCHEDULE,
    );
  }
  return schedule;
}
