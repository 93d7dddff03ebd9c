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

function typedFailures<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (err) {
      if (err instanceof LedgerError && NON_RETRYABLE_LEDGER_ERRORS.includes(err.type)) {
        throw ApplicationFailure.nonRetryable(err.message, err.type, err.details);
      }
      throw err;
    }
  };
}

export function createLifecycleActivities(deps: LifecycleDeps): LifecycleActivities {
  return {
    previewAuthorization: typedFailures((input) => previewAuthorization(deps, input)),
    voidPreview: typedFailures((input) => voidPreview(deps, input)),
    lapsePreview: typedFailures((input) => lapsePreview(deps, input)),
    settleTransaction: typedFailures((input) => settleTransaction(deps, input)),
    clawBackRefund: typedFailures((input) => clawBackRefund(deps, input)),
    markUnknown: (input) => markUnknown(deps, input),
  };
}
