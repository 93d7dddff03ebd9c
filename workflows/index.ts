// Workflow entry point bundled by the worker. Deterministic code only: this folder imports
// @temporalio/workflow and types, nothing with effects (test/workflows/boundary.test.ts).
export { transactionLifecycle } from './transaction-lifecycle';
export { handoverSweeper } from './handover-sweeper';
export { expireGrants } from './expire-grants';
export { webhookRetention } from './webhook-retention';
export { webhookDelivery } from './webhook-delivery';
export { claimResolution } from './claim-resolution';
export { payoutRun } from './payout-run';
export { statementRun } from './statement-run';
export { enrolmentRun } from './enrolment-run';
