// The webhook activities the WebhookDelivery workflow runs. Each is idempotent per
// (webhookId, attemptNumber): an attempt already recorded is returned as it was.
import { MAX_ATTEMPT_ERROR_LENGTH } from './send';
import { attemptAndRecord, recordAttempt, resultOf, type WebhookDeps } from './attempt';
import { loadAttemptState } from './attempt-state';
import type { WebhookActivities } from './types';

export type { WebhookDeps } from './attempt';

export function createWebhookActivities(deps: WebhookDeps): WebhookActivities {
  const { db } = deps;
  return {
    async attemptWebhookDelivery(input) {
      const state = await loadAttemptState(db, input.webhookId, input.attemptNumber);
      if (!state) return { outcome: 'not_found' };
      if (state.recorded) return resultOf(state.recorded);
      if (!input.replay && state.webhook.status === 'delivered') return { outcome: 'already_delivered' };
      if (state.webhook.status !== 'delivering') {
        // Shown while the request is out: a replay requested meanwhile is refused (409).
        await db.webhook.update({
          where: { id: input.webhookId },
          data: { status: 'delivering', updatedAt: deps.clock.now() },
        });
      }
      return attemptAndRecord(deps, state, input);
    },

    async recordLostWebhookAttempt(input) {
      if (!(await db.webhook.findUnique({ where: { id: input.webhookId }, select: { id: true } })))
        return { outcome: 'not_found' };
      const error = `attempt_lost: ${input.error}`.slice(0, MAX_ATTEMPT_ERROR_LENGTH);
      return recordAttempt(db, input, {
        startedAt: deps.clock.now(),
        statusCode: null,
        latencyMs: 0,
        outcome: 'failed',
        errorClass: 'attempt_lost',
        error,
      });
    },
  };
}
