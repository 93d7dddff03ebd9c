// The name, ids, input and result of the ExpireGrants workflow: what the worker's schedule and the
// sandbox clock's advance need to start a run, without importing the workflow's implementation.

export const EXPIRE_GRANTS_WORKFLOW_TYPE = 'expireGrants';

export interface ExpireGrantsInput {
  batchSize?: number;
  maxBatches?: number;
  /** Only this issuer's grants (tests, operator re-runs); all issuers when absent. */
  issuerId?: string;
}

export interface ExpireGrantsResult {
  /** Grants whose due notices this run handled, and the webhook records it wrote. */
  noticeGrants?: number;
  noticesRecorded?: number;
  expired: number;
  expiredMinor: number;
  failed: number;
  batches: number;
}

/** A sandbox issuer's run after its clock reached `clockOffsetMs`: one run per offset reached. */
export function issuerExpiryWorkflowId(issuerId: string, clockOffsetMs: number): string {
  return `expire/${issuerId}/clock-${clockOffsetMs}`;
}
