// The name of the HandoverSweeper workflow, which the worker's schedule starts every minute
// without importing the workflow's implementation. It takes no input.

export const HANDOVER_SWEEPER_WORKFLOW_TYPE = 'handoverSweeper';
