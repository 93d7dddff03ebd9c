// The name, id and input of the StatementRun workflow: what the API and the unstarted-runs watch
// need to start a run, without importing the workflow's implementation.

export const STATEMENT_RUN_WORKFLOW_TYPE = 'statementRun';

export interface StatementRunInput {
  runId: string;
  /** Where a continued run resumes ('' or absent: from the start). */
  afterAccountId?: string;
  /** Tests and the bench only: receivables per chunk. */
  chunkSize?: number;
}

export function statementRunWorkflowId(period: string, runId: string): string {
  return `statements/${period}/${runId}`;
}
