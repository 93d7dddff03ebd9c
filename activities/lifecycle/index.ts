// The lifecycle activities, bound to their dependencies. Ledger failures that retrying
// cannot fix become non-retryable Temporal failures with their stable type strings.
import { ApplicationFailure } from '@temporalio/activity';
import { LedgerError, NON_RETRYABLE_LEDGER_ERRORS } from '../../core/ledger';
import type { LifecycleDeps } from './deps';
import type { LifecycleActivities } from './types';
import { lapsePreview, previewAuthorization, voidPreview } from './preview';
import { settleTransaction } from './settle';
import { clawBackRefund } from './refund';
import { markUnknown } from './unknown';
import { lifecycleOutcomes } from '../../core/metrics';

function typedFailures<A extends unknown[], R extends { status: string }>(
  step: string,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      const outcome = await fn(...args);
      lifecycleOutcomes.inc({ step, status: outcome.status });
      return outcome;
    } catch (err) {
      if (err instanceof LedgerError && NON_RETRYABLE_LEDGER_ERRORS.includes(err.type)) {
        throw ApplicationFailure.nonRetryable(err.message, err.type, err.details);
      }
      throw err;
    }
  };
}

/** The outcome of markUnknown, whatever step failed for good. */
const MARKED_UNKNOWN = { step: 'markUnknown', status: 'unknown' } as const;

export function createLifecycleActivities(deps: LifecycleDeps): LifecycleActivities {
  // Its series exists from the worker's start at 0, so the first unknown is an increase
  // (RewardsLifecycleMarkedUnknown in scripts/monitoring/alert-rules.yml).
  lifecycleOutcomes.inc(MARKED_UNKNOWN, 0);
  return {
    previewAuthorization: typedFailures('previewAuthorization', (input) => previewAuthorization(deps, input)),
    voidPreview: typedFailures('voidPreview', (input) => voidPreview(deps, input)),
    lapsePreview: typedFailures('lapsePreview', (input) => lapsePreview(deps, input)),
    settleTransaction: typedFailures('settleTransaction', (input) => settleTransaction(deps, input)),
    clawBackRefund: typedFailures('clawBackRefund', (input) => clawBackRefund(deps, input)),
    // Counted once the event is marked (its update committed), not when it had finished meanwhile.
    markUnknown: async (input) => {
      if (await markUnknown(deps, input)) lifecycleOutcomes.inc(MARKED_UNKNOWN);
    },
  };
}
