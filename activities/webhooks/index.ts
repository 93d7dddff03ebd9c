// The webhook activities the WebhookDelivery workflow runs. Each is idempotent per
// (webhookId, endpointId, attemptNumber): an attempt already recorded is returned as it was.
import { MAX_ATTEMPT_ERROR_LENGTH } from './send';
import {
  attemptAndRecord,
  isSkipped,
  recordAttempt,
  resultOf,
  skipDelivery,
  withoutHealth,
  type WebhookDeps,
} from './attempt';
import { loadAttemptState } from './attempt-state';
import type { WebhookActivities } from './types';

export type { WebhookDeps } from './attempt';

export function createWebhookActivities(deps: WebhookDeps): WebhookActivities {
  const { db } = deps;
  return {
    async attemptWebhookDelivery(input) {
      const state = await loadAttemptState(db, input);
      if (!state) return { outcome: 'not_found' };
      if (state.recorded) return resultOf(state.recorded);
      if (!input.replay && state.delivery?.status === 'delivered') return { outcome: 'already_delivered' };
      // Disabled or deleted since the delivery was made: nothing is sent, no timer follows.
      if (isSkipped(state))
        return skipDelivery(db, { ...input, endpointId: input.endpointId ?? state.endpoint!.id }, deps.clock.now());
      if (state.delivery && state.delivery.status !== 'delivering') {
        // Shown while the request is out: a replay requested meanwhile is refused (409).
        await db.webhookDelivery.update({
          where: { webhookId_endpointId: { webhookId: input.webhookId, endpointId: state.endpoint!.id } },
          data: { status: 'delivering', updatedAt: deps.clock.now() },
        });
      }
      return withoutHealth(await attemptAndRecord(deps, state, input));
    },

    async recordLostWebhookAttempt(input) {
      const state = await loadAttemptState(db, input);
      if (!state) return { outcome: 'not_found' };
      const error = `attempt_lost: ${input.error}`.slice(0, MAX_ATTEMPT_ERROR_LENGTH);
      return withoutHealth(
        await recordAttempt(deps, state, input, {
          startedAt: deps.clock.now(),
          statusCode: null,
          latencyMs: 0,
          outcome: 'failed',
          errorClass: 'attempt_lost',
          error,
        }),
      );
    },
  };
}
