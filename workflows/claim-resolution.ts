// ClaimResolution: one run per claim (`claim/<issuer>/<claim id>`, searchable by the Rewards*
// attributes and RewardsStatus in the Temporal UI). It decides the claim from its evidence;
// a claim the evidence rejects ends there, with its claim_resolved. One that needs review
// waits, costing nothing, for an operator's decision, which arrives as the `resolve` update
// (POST /admin/v1/claims/{id}/approve or reject): the update answers with the outcome once the
// adjustment is posted, or fails with the reason the service refused it, the claim still in
// review. Every step is an idempotent activity keyed by the claim, so a worker killed at any
// point resumes to one outcome and one adjustment. Decisions take turns: of several that
// arrive together (approve and reject racing), the first decides and the others fail with
// CLAIM_NOT_IN_REVIEW; a decision past its acceptBy (its caller was told nothing was done) is
// refused (docs/decisions/0035-claim-decisions-answer-in-bounded-time.md).
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ClaimActivities, ClaimOutcome, OperatorDecision } from '../activities/claims';
import {
  CLAIM_DECISION_EXPIRED,
  CLAIM_DECISION_REFUSED,
  CLAIM_NOT_FOUND,
  CLAIM_NOT_IN_REVIEW,
} from '../core/failure-types';
import { postingOptions } from './activity-options';
import { claimOutcomeQuery, resolveClaimUpdate, type ClaimResolutionInput } from './claim-resolution-contract';
import { RewardsStatus } from './search-attributes';

const { decideClaim, resolveClaim } = proxyActivities<ClaimActivities>({
  ...postingOptions,
  retry: {
    ...postingOptions.retry,
    nonRetryableErrorTypes: [
      ...(postingOptions.retry?.nonRetryableErrorTypes ?? []),
      CLAIM_NOT_FOUND,
      CLAIM_DECISION_REFUSED,
      CLAIM_DECISION_EXPIRED,
    ],
  },
});

/**
 * Decisions take turns, and a decision that found the claim resolved by another fails. Marked
 * because runs recorded before it let two decisions that arrived in one workflow task both run
 * their activity (the second answered with the first one's outcome); their histories replay
 * without the marker, as they ran.
 */
export const ONE_DECISION_AT_A_TIME_PATCH = 'claim-one-decision-at-a-time';

const notInReview = (o: ClaimOutcome | null) =>
  ApplicationFailure.create({
    message: `the claim is ${o?.status ?? 'being decided'}, not in review`,
    type: CLAIM_NOT_IN_REVIEW,
    nonRetryable: true,
  });

const isFinal = (o: ClaimOutcome | null) => o !== null && (o.status === 'approved' || o.status === 'rejected');

export async function claimResolution(input: ClaimResolutionInput): Promise<ClaimOutcome> {
  let outcome: ClaimOutcome | null = null;
  // Set while an operator's decision runs: a second one waits, then finds the claim resolved.
  let deciding = false;
  setHandler(claimOutcomeQuery, () => outcome);
  setHandler(
    resolveClaimUpdate,
    async (operator) => {
      // A decision still being retried (its activity committed, its worker died) is waited for.
      await condition(() => outcome !== null && !deciding);
      const inTurn = patched(ONE_DECISION_AT_A_TIME_PATCH);
      // Every waiting condition that holds is released in the same pass, so decisions that
      // arrived together all get here: the first takes its turn, the others wait for it again.
      if (inTurn) while (deciding) await condition(() => !deciding);
      if (outcome!.status !== 'needs_review') throw notInReview(outcome);
      deciding = true;
      try {
        outcome = await resolveClaim({ claimId: input.claimId, operator });
        // Resolved by another decision (one whose activity committed but never reported back):
        // this one did nothing.
        if (inTurn && operator.decisionId !== undefined && outcome.decisionId !== operator.decisionId)
          throw notInReview(outcome);
        return outcome;
      } finally {
        deciding = false;
      }
    },
    {
      // Refused before it is written to history: the claim is resolved already. A decision past
      // its acceptBy is refused by resolveClaim, under the claim's lock, on the database's clock.
      validator: (_operator: OperatorDecision) => {
        if (isFinal(outcome)) throw notInReview(outcome);
      },
    },
  );
  outcome = await decideClaim({ claimId: input.claimId });
  upsertSearchAttributes([{ key: RewardsStatus, value: outcome.status }]);
  await condition(() => isFinal(outcome));
  upsertSearchAttributes([{ key: RewardsStatus, value: outcome!.status }]);
  await condition(allHandlersFinished);
  return outcome!;
}
