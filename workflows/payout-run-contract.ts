// The name, id and input of the PayoutRun workflow: what the API and the unstarted-runs watch
// need to start a run, without importing the workflow's implementation.

export const PAYOUT_WORKFLOW_TYPE = 'payoutRun';

export interface PayoutRunInput {
  issuerId: string;
  payoutId: string;
  /** Where a continued run resumes ('' or absent: from the start). */
  afterAccountId?: string;
  /** Tests and the bench only: groups per chunk. */
  chunkSize?: number;
}

export function payoutWorkflowId(issuerId: string, payoutId: string): string {
  return `payout/${issuerId}/${payoutId}`;
}
