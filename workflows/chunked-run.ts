// The loop a run over accounts shares (payouts, statements): one activity per chunk, in account
// id order, until a chunk comes back short; a chunk that fails past its retries marks the run
// failed and ends it, and what earlier chunks did stays done. The history stays bounded: after
// CHUNKS_PER_RUN chunks the caller continues as new from where this returns.
import { ApplicationFailure, isCancellation, upsertSearchAttributes } from '@temporalio/workflow';
import { RewardsStatus } from './search-attributes';

/** Chunks before a run continues as new: 200 activities keep its history far below Temporal's limits. */
export const CHUNKS_PER_RUN = 200;

export interface ChunkedRun {
  /** The run as a failure message names it, e.g. "payout po_…". */
  name: string;
  /** Where this run resumes ('' from the start). */
  startAfter: string;
  /** One chunk after the given account: the account the next chunk starts after, or null when done. */
  chunk(afterAccountId: string): Promise<string | null>;
  /** Marks the run failed, returning its new status for the Temporal UI. */
  fail(reason: string): Promise<{ status: string }>;
  /** The failure type the run ends with, non-retryable. */
  failureType: string;
}

/** Runs up to CHUNKS_PER_RUN chunks: where the next run resumes, or null when every chunk is done. */
export async function runChunks(run: ChunkedRun): Promise<string | null> {
  let after: string | null = run.startAfter;
  try {
    for (let chunk = 0; after !== null && chunk < CHUNKS_PER_RUN; chunk++) after = await run.chunk(after);
  } catch (err) {
    if (isCancellation(err) || !(err instanceof Error)) throw err;
    const failed = await run.fail(err.message);
    upsertSearchAttributes([{ key: RewardsStatus, value: failed.status }]);
    throw ApplicationFailure.nonRetryable(`${run.name} failed: ${err.message}`, run.failureType);
  }
  return after;
}
