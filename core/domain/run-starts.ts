// Starting the workflow that does the work a row asks for: a claim's resolution, a payout run, a
// statement run. The API writes the row, then starts its workflow; a process that dies in between
// leaves a row that nothing works on and that blocks what comes after it (the transaction's next
// claim is 409 claim_open, the issuer's next payout run 409 payout_in_progress, the next statement
// run 409 statement_run_in_progress). The worker's watch (worker/unstarted-runs-watch.ts) starts
// those: every row still open or processing, a turn after it was first seen so, whose workflow
// was never started.
//
// The watch starts with REJECT_DUPLICATE, so it starts only what never ran: a run that is under
// way, or one that closed without finishing its row (failed, or terminated by an operator), is
// left alone, and a run that keeps failing is never restarted in a loop. A row is started only
// once it was seen in the turn before, a minute earlier, so the watch does not race the API's own
// start milliseconds after the row's commit (an API of the previous release would take the
// watch's start for a failure of its own). The rows' times are the issuer's clock, a sandbox's
// own, so they cannot tell a row's age.
import { TypedSearchAttributes, WorkflowIdReusePolicy } from '@temporalio/common';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { WorkflowEngine } from '../workflow-engine';
import type { Db } from '../../prisma/client';
import type { Claim, Payout, StatementRun } from '../../prisma/generated/client';
import { CLAIM_WORKFLOW_TYPE, type ClaimResolutionInput } from '../../workflows/claim-resolution-contract';
import { PAYOUT_WORKFLOW_TYPE, payoutWorkflowId, type PayoutRunInput } from '../../workflows/payout-run-contract';
import {
  STATEMENT_RUN_WORKFLOW_TYPE,
  statementRunWorkflowId,
  type StatementRunInput,
} from '../../workflows/statement-run-contract';
import {
  RewardsChgId,
  RewardsIssuerId,
  RewardsMerchantId,
  RewardsStatus,
  RewardsTransactionId,
} from '../../workflows/search-attributes';

/** Only a run never started may be started: see the file's head. */
const NEVER_STARTED = { workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE };

/** Rows the watch looks at per kind and turn: a backlog of more takes a few turns. */
export const UNSTARTED_PAGE = 100;

export async function startClaimWorkflow(
  temporal: WorkflowEngine,
  claim: Claim,
  options: { neverStarted?: boolean } = {},
): Promise<void> {
  const input: ClaimResolutionInput = { issuerId: claim.issuerId, claimId: claim.id };
  await temporal.client.workflow.start(CLAIM_WORKFLOW_TYPE, {
    workflowId: claim.workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: RewardsIssuerId, value: claim.issuerId },
      { key: RewardsChgId, value: claim.chgId },
      { key: RewardsTransactionId, value: claim.transactionId ? [claim.transactionId] : [] },
      ...(claim.merchantId ? [{ key: RewardsMerchantId, value: claim.merchantId }] : []),
      { key: RewardsStatus, value: 'open' },
    ]),
    ...(options.neverStarted ? NEVER_STARTED : {}),
  });
}

export async function startPayoutRunWorkflow(
  temporal: WorkflowEngine,
  payout: Payout,
  options: { neverStarted?: boolean } = {},
): Promise<void> {
  const input: PayoutRunInput = {
    issuerId: payout.issuerId,
    payoutId: payout.id,
    chunkSize: temporal.settings.payoutChunkGroups,
  };
  await temporal.client.workflow.start(PAYOUT_WORKFLOW_TYPE, {
    workflowId: payoutWorkflowId(payout.issuerId, payout.id),
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: RewardsIssuerId, value: payout.issuerId },
      { key: RewardsStatus, value: 'processing' },
    ]),
    ...(options.neverStarted ? NEVER_STARTED : {}),
  });
}

export async function startStatementRunWorkflow(
  temporal: WorkflowEngine,
  run: StatementRun,
  options: { neverStarted?: boolean; chunkSize?: number } = {},
): Promise<void> {
  const input: StatementRunInput = { runId: run.id, ...(options.chunkSize ? { chunkSize: options.chunkSize } : {}) };
  await temporal.client.workflow.start(STATEMENT_RUN_WORKFLOW_TYPE, {
    workflowId: statementRunWorkflowId(run.period, run.id),
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([{ key: RewardsStatus, value: 'processing' }]),
    ...(options.neverStarted ? NEVER_STARTED : {}),
  });
}

/** What one turn started, by kind: the rows' ids. */
export interface UnstartedRuns {
  claims: string[];
  payoutRuns: string[];
  statementRuns: string[];
}

/**
 * Starts the workflow of every open claim and processing payout or statement run that has none and
 * that was among `seenBefore` (the ids the turn before returned), the oldest first, UNSTARTED_PAGE
 * of each kind; returns what it started and the ids to pass to the next turn. The rows with a run
 * (nearly all: a claim is open only until its run decides it, and runs are one at a time) cost one
 * start call each, refused.
 */
export async function startUnstartedRuns(
  db: Db,
  temporal: WorkflowEngine,
  seenBefore: ReadonlySet<string>,
): Promise<{ started: UnstartedRuns; seen: Set<string> }> {
  const oldestFirst = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];
  const [claims, payoutRuns, statementRuns] = await Promise.all([
    db.claim.findMany({ where: { status: 'open' }, orderBy: oldestFirst, take: UNSTARTED_PAGE }),
    db.payout.findMany({ where: { kind: 'run', status: 'processing' }, orderBy: oldestFirst, take: UNSTARTED_PAGE }),
    db.statementRun.findMany({ where: { status: 'processing' }, orderBy: oldestFirst, take: UNSTARTED_PAGE }),
  ]);
  const neverStarted = { neverStarted: true };
  const due = <T extends { id: string }>(rows: T[]) => rows.filter((row) => seenBefore.has(row.id));
  return {
    started: {
      claims: await startedOf(due(claims), (c) => startClaimWorkflow(temporal, c, neverStarted)),
      payoutRuns: await startedOf(due(payoutRuns), (p) => startPayoutRunWorkflow(temporal, p, neverStarted)),
      statementRuns: await startedOf(due(statementRuns), (r) => startStatementRunWorkflow(temporal, r, neverStarted)),
    },
    seen: new Set([...claims, ...payoutRuns, ...statementRuns].map((row) => row.id)),
  };
}

/** The ids of the rows whose start went through; one that had a run is skipped, any other failure thrown. */
async function startedOf<T extends { id: string }>(rows: T[], start: (row: T) => Promise<void>): Promise<string[]> {
  const started: string[] = [];
  for (const row of rows) {
    try {
      await start(row);
      started.push(row.id);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }
  return started;
}
