// An issuer's backlog (API.md, "Ingestion"): its events accepted and not yet processed, which
// GET /api/v2/ingestion/lag reports, and the bound on those still waiting for their hand-over
// past which its ingestion answers 429 backlog_full (INGESTION_BACKLOG_LIMIT, or the operator's
// override for the issuer). Other issuers are not affected: admission takes issuers in turn
// (core/domain/handover-admission.ts), so a long backlog delays only its own issuer's purchases,
// and the bound keeps it from growing without end.
import { ApiError } from '../../core/errors';
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import type { Logger } from '../../core/logger';

/**
 * Retry-After of a backlog_full answer. The backlog drains at the deployment's pace, shared by
 * the issuers that have one, so the service cannot promise a time; half a minute costs an issuer
 * that retries at once a couple of refused requests a minute, and the lag route says how far it is.
 */
export const BACKLOG_RETRY_AFTER_SECONDS = 30;

/** How long a process reuses an issuer's count of waiting events (plus what it stored since), at least. */
const COUNT_TTL_MS = 1_000;

/**
 * Index entries of the waiting queue one process reads per second and issuer, at most: counting
 * costs one entry per waiting event (up to the limit), so a long backlog is counted less often. A
 * backlog of 300,000 under a raised limit was counted in about 290 ms, 88 times in 11 s by two API
 * processes, and the issuer's intake fell to a third. The process adds what it stores meanwhile;
 * what other processes store in between may overshoot the limit by that many seconds of intake.
 */
const COUNTED_PER_SECOND = 50_000;

/** How long a count of `waiting` events stands before it is read again. */
export function countStandsForMs(waiting: number): number {
  return Math.max(COUNT_TTL_MS, (waiting / COUNTED_PER_SECOND) * 1000);
}

// Counting stops at the limit: a long backlog costs the check no more than the limit's entries
// of the waiting index.
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

interface IssuerCount {
  waiting: number;
  readAtMs: number;
  /** The count under way, shared by every request that needs it: one query, not one per request. */
  reading?: Promise<void>;
  /** Queued while the count was under way: its snapshot may not have seen them. */
  queuedSinceRead: number;
}

/**
 * An accepted request never waits for a count it does not need: a stale count is read again in
 * the background and the request decides on the one it has. A request that would be refused, or
 * an issuer's first, waits for a fresh one, so an issuer whose backlog drained is let in at once.
 */
export function createBacklogGate(db: Db, defaultLimit: number, logger: Logger): BacklogGate {
  const counts = new Map<string, IssuerCount>();

  const read = (issuerId: string, entry: IssuerCount, limit: number): Promise<void> =>
    (entry.reading ??= (async () => {
      entry.queuedSinceRead = 0;
      try {
        const [{ n }] = await hotQuery<{ n: number }>(db, COUNT_WAITING, [issuerId, limit]);
        Object.assign(entry, { waiting: n + entry.queuedSinceRead, readAtMs: performance.now() });
      } finally {
        entry.reading = undefined;
      }
    })());

  return {
    async check(issuer) {
      const limit = issuer.ingestionBacklogLimit ?? defaultLimit;
      let entry = counts.get(issuer.id);
      if (!entry) {
        entry = { waiting: 0, readAtMs: -Infinity, queuedSinceRead: 0 };
        counts.set(issuer.id, entry);
      }
      const stale = performance.now() - entry.readAtMs >= countStandsForMs(entry.waiting);
      if (stale && entry.readAtMs !== -Infinity && entry.waiting < limit) {
        read(issuer.id, entry, limit).catch((err: unknown) =>
          logger.warn({ err, issuerId: issuer.id }, 'counting the backlog failed; the next request counts again'),
        );
      } else if (stale) await read(issuer.id, entry, limit);
      if (entry.waiting >= limit) throw backlogFull(limit);
    },
    queued(issuerId, events) {
      const entry = counts.get(issuerId);
      if (!entry) return;
      entry.waiting += events;
      if (entry.reading) entry.queuedSinceRead += events;
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
