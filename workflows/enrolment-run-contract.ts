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
  /**
   * Chunks side by side, each over its own range of group ids (absent: one after another, as runs
   * started before lanes did). The run plans the ranges at its start.
   */
  lanes?: number;
  /** Where a continued run's lanes resume; absent: the ranges are still to plan. */
  cursors?: EnrolmentLane[];
}

/** A lane: the groups after `afterChgId` up to `upToChgId` (inclusive; null: to the end). */
export interface EnrolmentLane {
  afterChgId: string;
  upToChgId: string | null;
}

export function enrolmentRunWorkflowId(offerId: string, runId: string): string {
  return `enrolment/${offerId}/${runId}`;
}
