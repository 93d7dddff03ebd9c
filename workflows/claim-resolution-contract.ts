// The names, id, input, update and query of the ClaimResolution workflow: what the API and the
// unstarted-runs watch need to start a run and send it an operator's decision, without importing
// the workflow's implementation (its activity proxies and their options).
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { ClaimOutcome, OperatorDecision } from '../core/rules/claims';

export const CLAIM_WORKFLOW_TYPE = 'claimResolution';

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
