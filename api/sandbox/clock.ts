// The sandbox test clock's effects (docs/decisions/0011-sandbox-simulation.md). An advance:
//   1. moves the issuer's offset in the database, with the NOTIFY that makes every API process
//      forget its cached issuer (the offset travels on it; api/middleware/token-cache.ts);
//   2. tells each of the issuer's purchases whose previewed authorization waits for its
//      settlement the new offset (clockAdvanced signal): the run re-evaluates its time-out on
//      the issuer's clock and lapses the preview if it has passed (workflows/sandbox-clock.ts);
//   3. starts an expireGrants run for the issuer, which expires at the issuer's new now
//      (activities/expiry: an issuer's batch runs at its clock).
// Availability needs nothing: every read takes the issuer's now (api/sandbox/issuer-clock.ts).
import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { mapLimited } from '../../core/concurrency';
import { errors } from '../../core/errors';
import { AUTH_CHANGED_CHANNEL } from '../middleware/token-cache';
import {
  EXPIRE_GRANTS_WORKFLOW_TYPE,
  issuerExpiryWorkflowId,
  type ExpireGrantsInput,
} from '../../workflows/expire-grants-contract';
import { clockAdvancedSignal } from '../../workflows/lifecycle-signals';
import { MAX_CLOCK_OFFSET_MS } from './schemas';

/** Waiting purchases signalled per advance; a sandbox holds far fewer. */
export const MAX_SIGNALLED_PER_ADVANCE = 1000;
const SIGNAL_CONCURRENCY = 8;

/** The issuer's offset as stored (the cached issuer may be a few milliseconds behind an advance). */
export async function readClockOffsetMs(db: Db, issuerId: string): Promise<number> {
  const [row] = await db.$queryRaw<
    Array<{ offset: number }>
  >`SELECT clock_offset_ms::float8 AS "offset" FROM issuer WHERE id = ${issuerId}`;
  return row?.offset ?? 0;
}

/**
 * Adds `byMs` to a sandbox issuer's offset and returns the new offset. Atomic, so concurrent
 * advances add up; refused (400) past the 20-year bound.
 */
export async function moveClock(db: Db, issuerId: string, byMs: number): Promise<number> {
  return db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<Array<{ offset: number }>>`
      UPDATE issuer SET clock_offset_ms = clock_offset_ms + ${byMs}::bigint, updated_at = now()
       WHERE id = ${issuerId} AND environment = 'sandbox' AND clock_offset_ms + ${byMs}::bigint <= ${MAX_CLOCK_OFFSET_MS}::bigint
      RETURNING clock_offset_ms::float8 AS "offset"`;
    if (!row) {
      throw errors.validation(
        'clock_limit_reached',
        'The sandbox clock cannot run more than 20 years ahead of real time.',
        [{ path: '/days', message: 'moves the clock past its limit' }],
      );
    }
    await tx.$executeRaw`SELECT pg_notify(${AUTH_CHANGED_CHANNEL}, ${issuerId})`;
    return row.offset;
  });
}

/**
 * Workflow ids of the issuer's purchases that wait for a settlement: a previewed authorization
 * with no settlement yet (the same test as the summary's pending cashback).
 */
export async function waitingPurchases(db: Db, issuerId: string): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ workflowId: string }>>`
    SELECT DISTINCT a.workflow_id AS "workflowId" FROM ingested_event a
     WHERE a.issuer_id = ${issuerId} AND a.kind = 'auth' AND a.reward_status = 'previewed'
       AND NOT EXISTS (SELECT 1 FROM ingested_event s
                        WHERE s.workflow_id = a.workflow_id AND s.issuer_id = a.issuer_id AND s.kind = 'settled' AND s.state = 'settled')
     LIMIT ${MAX_SIGNALLED_PER_ADVANCE}`;
  return rows.map((r) => r.workflowId);
}

/** Signals the new offset to each run; a run that has closed meanwhile has nothing to wait for. */
export async function signalClock(
  temporal: WorkflowEngine,
  workflowIds: string[],
  clockOffsetMs: number,
  logger: Logger,
): Promise<number> {
  const delivered = await mapLimited(workflowIds, SIGNAL_CONCURRENCY, async (workflowId) => {
    try {
      await temporal.client.workflow.getHandle(workflowId).signal(clockAdvancedSignal, { clockOffsetMs });
      return true;
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return false;
      throw err;
    }
  });
  const count = delivered.filter(Boolean).length;
  logger.debug({ signalled: count, of: workflowIds.length, clockOffsetMs }, 'sandbox clock signalled');
  return count;
}

/** Starts the issuer's expiry run at its new now; one run per offset reached. */
export async function startIssuerExpiry(
  temporal: WorkflowEngine,
  issuerId: string,
  clockOffsetMs: number,
): Promise<string> {
  const workflowId = issuerExpiryWorkflowId(issuerId, clockOffsetMs);
  const input: ExpireGrantsInput = { issuerId };
  try {
    await temporal.client.workflow.start(EXPIRE_GRANTS_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: temporal.taskQueue,
      args: [input],
    });
  } catch (err) {
    // The same offset reached twice can only be a retry of this request: its run is enough.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return workflowId;
}
