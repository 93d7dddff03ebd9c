// Starting the workflow that does the work a row asks for: a claim's resolution, a payout run, a
// statement run. The API writes the row, then starts its workflow; a process that dies in between
// leaves a row that nothing works on and that blocks what comes after it (the transaction's next
// claim is 409 claim_open, the issuer's next payout run 409 payout_in_progress, the next statement
// run 409 statement_run_in_progress). The worker's watch (worker/unstarted-runs-watch.ts) starts
// those: every row still open or processing, a turn after it was first seen so, whose workflow
// was never started.
//
// A claim in review has had its run (the run put it there), but a restore can leave it without
// one: Temporal new or restored from before the run, or the run deleted by an operator
// (docs/operating/runbook.md, "Claims waiting for review"). Without its run no decision can reach
// it. The watch starts those too; the run finds the claim decided and waits for the operator
// (decideClaim answers from a claim that is no longer open). The review queue is long and nearly
// every claim in it has its run, so the watch walks it a page a turn rather than rereading its
// head: a page is read on one turn and started on the next, so each claim is still seen on two
// turns, and the walk starts over at the end of the queue.
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
  // The run finds an open claim open, and one in review in review: it starts as it will stand.
  await temporal.client.workflow.start(CLAIM_WORKFLOW_TYPE, {
    workflowId: claim.workflowId,
    taskQueue: temporal.taskQueue,
    args: [input],
    typedSearchAttributes: new TypedSearchAttributes([
      { key: RewardsIssuerId, value: claim.issuerId },
      { key: RewardsChgId, value: claim.chgId },
      { key: RewardsTransactionId, value: claim.transactionId ? [claim.transactionId] : [] },
      ...(claim.merchantId ? [{ key: RewardsMerchantId, value: claim.merchantId }] : []),
      { key: RewardsStatus, value: claim.status === 'needs_review' ? 'needs_review' : 'open' },
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
  /** Open claims. */
  claims: string[];
  /** Claims in review (needs_review). */
  claimsInReview: string[];
  payoutRuns: string[];
  statementRuns: string[];
}

/** Where the walk of the review queue stands: the last claim of the page read (oldest first). */
export interface ReviewCursor {
  createdAt: Date;
  id: string;
}

/** What a turn hands to the next: the ids it saw, and where the walk of the review queue goes on. */
export interface UnstartedRunsTurn {
  seen: ReadonlySet<string>;
  /** null: from the head of the queue. */
  reviewsAfter: ReviewCursor | null;
}

/**
 * Starts the workflow of every open claim and processing payout or statement run that has none and
 * that was among `previous.seen` (the ids the turn before returned), the oldest first,
 * UNSTARTED_PAGE of each kind, and of every claim still in review that the turn before saw; reads
 * the next page of the review queue for the next turn. Returns what it started and what to pass
 * to the next turn. The rows with a run (nearly all: a claim is open only until its run decides
 * it, one in review waits in its run, and runs are one at a time) cost one start call each,
 * refused.
 */
export async function startUnstartedRuns(
  db: Db,
  temporal: WorkflowEngine,
  previous: UnstartedRunsTurn = { seen: new Set(), reviewsAfter: null },
): Promise<{ started: UnstartedRuns } & UnstartedRunsTurn> {
  const oldestFirst = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];
  const after = previous.reviewsAfter;
  const [claims, reviewsSeen, reviewPage, payoutRuns, statementRuns] = await Promise.all([
    db.claim.findMany({ where: { status: 'open' }, orderBy: oldestFirst, take: UNSTARTED_PAGE }),
    previous.seen.size === 0
      ? []
      : db.claim.findMany({ where: { status: 'needs_review', id: { in: [...previous.seen] } }, orderBy: oldestFirst }),
    db.claim.findMany({
      where: {
        status: 'needs_review',
        ...(after && {
          OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }],
        }),
      },
      orderBy: oldestFirst,
      take: UNSTARTED_PAGE,
    }),
    db.payout.findMany({ where: { kind: 'run', status: 'processing' }, orderBy: oldestFirst, take: UNSTARTED_PAGE }),
    db.statementRun.findMany({ where: { status: 'processing' }, orderBy: oldestFirst, take: UNSTARTED_PAGE }),
  ]);
  const neverStarted = { neverStarted: true };
  const due = <T extends { id: string }>(rows: T[]) => rows.filter((row) => previous.seen.has(row.id));
  const last = reviewPage.at(-1);
  return {
    started: {
      claims: await startedOf(due(claims), (c) => startClaimWorkflow(temporal, c, neverStarted)),
      claimsInReview: await startedOf(reviewsSeen, (c) => startClaimWorkflow(temporal, c, neverStarted)),
      payoutRuns: await startedOf(due(payoutRuns), (p) => startPayoutRunWorkflow(temporal, p, neverStarted)),
      statementRuns: await startedOf(due(statementRuns), (r) => startStatementRunWorkflow(temporal, r, neverStarted)),
    },
    seen: new Set([...claims, ...reviewPage, ...payoutRuns, ...statementRuns].map((row) => row.id)),
    // A short page is the end of the queue: the next page read starts from its head again.
    reviewsAfter: last && reviewPage.length === UNSTARTED_PAGE ? { createdAt: last.createdAt, id: last.id } : null,
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
