// An issuer's backlog (API.md, "Ingestion"): its events accepted and not yet processed, which
// GET /api/v2/ingestion/lag reports, and the bound on those still waiting for their hand-over
// past which its ingestion answers 429 backlog_full (INGESTION_BACKLOG_LIMIT, or the operator's
// override for the issuer). Other issuers are not affected: admission takes issuers in turn
// (core/domain/handover-admission.ts), so a long backlog delays only its own issuer's purchases,
// and the bound keeps it from growing without end.
import { ApiError } from '../../core/errors';
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';

/**
 * Retry-After of a backlog_full answer. The backlog drains at the deployment's pace, shared by
 * the issuers that have one, so the service cannot promise a time; half a minute costs an issuer
 * that retries at once a couple of refused requests a minute, and the lag route says how far it is.
 */
export const BACKLOG_RETRY_AFTER_SECONDS = 30;

/** How long a process reuses an issuer's count of waiting events (plus what it stored since). */
const COUNT_TTL_MS = 1_000;

// Counting stops at the limit: a long backlog costs the check no more than the limit's entries
// of the waiting index, once a second per issuer and API process.
const COUNT_WAITING: HotStatement = {
  name: 'ingestion_count_waiting_v1',
  text: `SELECT count(*)::int AS n FROM (
           SELECT 1 FROM handover_pending WHERE issuer_id = $1 AND admitted_at IS NULL LIMIT $2) w`,
};

export interface BacklogGate {
  /** Throws 429 backlog_full when the issuer's waiting events have reached its limit. */
  check(issuer: { id: string; ingestionBacklogLimit: number | null }): Promise<void>;
  /** Events the issuer just queued: counted until the next count is read. */
  queued(issuerId: string, events: number): void;
}

export function createBacklogGate(db: Db, defaultLimit: number): BacklogGate {
  const counts = new Map<string, { waiting: number; readAtMs: number }>();
  return {
    async check(issuer) {
      const limit = issuer.ingestionBacklogLimit ?? defaultLimit;
      const nowMs = performance.now();
      let entry = counts.get(issuer.id);
      if (!entry || nowMs - entry.readAtMs >= COUNT_TTL_MS) {
        const [{ n }] = await hotQuery<{ n: number }>(db, COUNT_WAITING, [issuer.id, limit]);
        entry = { waiting: n, readAtMs: nowMs };
        counts.set(issuer.id, entry);
      }
      if (entry.waiting >= limit) throw backlogFull(limit);
    },
    queued(issuerId, events) {
      const entry = counts.get(issuerId);
      if (entry) entry.waiting += events;
    },
  };
}

function backlogFull(limit: number): ApiError {
  return new ApiError(
    'rate_limited',
    `${limit} or more of this issuer's events wait to be processed, its limit: nothing of this request was stored. ` +
      `Retry after ${BACKLOG_RETRY_AFTER_SECONDS} s; GET /api/v2/ingestion/lag shows the backlog.`,
    {
      reasonCode: 'backlog_full',
      headers: { 'Retry-After': String(BACKLOG_RETRY_AFTER_SECONDS) },
      details: { waitingEventsLimit: limit, retryAfterSeconds: BACKLOG_RETRY_AFTER_SECONDS },
    },
  );
}
