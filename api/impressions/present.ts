// The answer to a batch of impressions: one result per item, a refusal with its error object.
import type { ImpressionOutcome } from './store';

export function presentImpressionResults(outcomes: readonly ImpressionOutcome[]) {
  return {
    results: outcomes.map((o) =>
      o.status === 'refused'
        ? { index: o.index, offerId: o.offerId, status: o.status, error: o.error.toBody() }
        : { index: o.index, offerId: o.offerId, status: o.status, at: o.at.toISOString() },
    ),
  };
}
