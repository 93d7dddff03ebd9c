// The name, id and input of the EnrolmentRun workflow: what the API and the worker's enrolment
// watch need to start a run, without importing the workflow's implementation.

export const ENROLMENT_RUN_WORKFLOW_TYPE = 'enrolmentRun';

export interface EnrolmentRunInput {
  offerId: string;
  runId: string;
  /** Where a continued run resumes: the last group id done ('' or absent: from the stored run row). */
  afterChgId?: string;
  /** Tests and the bench only: groups per chunk. */
  chunkSize?: number;
}

export function enrolmentRunWorkflowId(offerId: string, runId: string): string {
  return `enrolment/${offerId}/${runId}`;
}
