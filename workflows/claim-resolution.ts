// ClaimResolution: one run per claim (`claim/<issuer>/<claim id>`, searchable by the Rewards*
// attributes and RewardsStatus in the Temporal UI). It decides the claim from its evidence;
// a claim the evidence rejects ends there, with its claim_resolved. One that needs review
// waits, costing nothing, for an operator's decision, which arrives as the `resolve` update
// (POST /admin/v1/claims/{id}/approve or reject): the update answers with the outcome once the
// adjustment is posted, or fails with the reason the service refused it, the claim still in
// review. Every step is an idempotent activity keyed by the claim, so a worker killed at any
// point resumes to one outcome and one adjustment.
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  defineQuery,
  defineUpdate,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ClaimActivities, ClaimOutcome, OperatorDecision } from '../activities/claims';
import { CLAIM_DECISION_REFUSED, CLAIM_NOT_FOUND } from '../core/failure-types';
import { postingOptions } from './activity-options';
import { RewardsStatus } from './search-attributes';

export const CLAIM_WORKFLOW_TYPE = 'claimResolution';

const { decideClaim, resolveClaim } = proxyActivities<ClaimActivities>({
  ...postingOptions,
  retry: {
    ...postingOptions.retry,
    nonRetryableErrorTypes: [
      ...(postingOptions.retry?.nonRetryableErrorTypes ?? []),
      CLAIM_NOT_FOUND,
      CLAIM_DECISION_REFUSED,
    ],
  },
});

export interface ClaimResolutionInput {
  issuerId: string;
  claimId: string;
}

/** The operator's decision; answers with the claim's outcome. */
export const resolveClaimUpdate = defineUpdate<ClaimOutcome, [OperatorDecision]>('resolve');
/** Where the claim stands, for the UI's Queries tab. */
export const claimOutcomeQuery = defineQuery<ClaimOutcome | null>('outcome');

export function claimWorkflowId(issuerId: string, claimId: string): string {
  return `claim/${issuerId}/${claimId}`;
}

const notInReview = (o: ClaimOutcome | null) =>
  ApplicationFailure.nonRetryable(`the claim is ${o?.status ?? 'being decided'}, not in review`);

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
      if (outcome!.status !== 'needs_review') throw notInReview(outcome);
      deciding = true;
      try {
        outcome = await resolveClaim({ claimId: input.claimId, operator });
        return outcome;
      } finally {
        deciding = false;
      }
    },
    {
      // Refused before it is written to history: the claim is resolved already.
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
