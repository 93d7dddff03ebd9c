// WebhookRetention: run by a Temporal Schedule (worker/schedules.ts, hourly, overlap SKIP).
// Deletes the webhook records past their issuer's webhookRetentionDays whose deliveries have all
// ended (activities/webhooks/retention.ts), at the workflow's clock (so time-skipping tests and
// replays agree on "now"):
//   1. Delete one bounded batch of webhooks with their deliveries and attempts.
//   2. Repeat while batches come back full and delete something, at most MAX_BATCHES_PER_RUN
//      times; what is left is taken by the next hourly run.
// Nothing to compensate: each batch is one idempotent database transaction.
import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/webhooks/retention';
import { postingOptions } from './activity-options';
import { runBatches } from './batches';
import type { WebhookRetentionInput, WebhookRetentionResult } from './webhook-retention-contract';

const { deleteExpiredWebhooks } = proxyActivities<RetentionActivities>(postingOptions);

export const DEFAULT_RETENTION_BATCH_SIZE = 5000;
/**
 * 500,000 webhooks a run, about 140 a second of the hour: more than one worker writes at the
 * sustained rate the bench measures. A larger backlog (the first runs after the upgrade that
 * brought retention) drains over the following runs.
 */
export const MAX_BATCHES_PER_RUN = 100;

export async function webhookRetention(input: WebhookRetentionInput = {}): Promise<WebhookRetentionResult> {
  const batchSize = input.batchSize ?? DEFAULT_RETENTION_BATCH_SIZE;
  const atMs = Date.now(); // workflow time: the same on replay, moved by the time-skipping server
  const total: WebhookRetentionResult = { webhooks: 0, deliveries: 0, attempts: 0, batches: 0 };
  total.batches = await runBatches(
    Math.min(input.maxBatches ?? MAX_BATCHES_PER_RUN, MAX_BATCHES_PER_RUN),
    () => deleteExpiredWebhooks({ atMs, batchSize, issuerId: input.issuerId }),
    (batch) => {
      total.webhooks += batch.webhooks;
      total.deliveries += batch.deliveries;
      total.attempts += batch.attempts;
      return batch.webhooks;
    },
  );
  return total;
}
