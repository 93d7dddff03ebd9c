// Admission control at the hand-over (docs/decisions/0037-admission-at-the-hand-over.md). Temporal
// finishes fewer purchases, not more, when thousands are handed to it at once, so only a bounded
// number are in flight: handed over (admitted) and their workflow not yet idle again. Every other
// accepted event waits in handover_pending, where it was stored with the event; the step that
// processes an event marks its row processed (a trigger), and the worker deletes the row once the
// workflow has gone idle (worker/handover-release.ts). Admitting is one short transaction under one
// advisory lock, so that no two processes (APIs, workers) can both see a free place and take it:
// it counts what is in flight, then marks the next events admitted. Their signals follow the
// commit (core/domain/handover.ts); a refused signal puts its event back to wait.
//
// Which events: an API admits the events it has just stored, when their issuer has nothing older
// waiting (oldest first per issuer); the workers' hand-over watch admits the waiting ones, from
// issuers in turn: an issuer's next event goes before those of issuers with more in flight, so
// one issuer's backlog of 50,000 takes its share of the places and no more.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { sqlQuery, sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';

/**
 * An admitted purchase that has not finished this long after its hand-over stops counting
 * against the bound: its workflow is stuck (no worker polls its queue) or waits on purpose (a
 * refund for a purchase not yet settled), and holds no worker while it does. It is still handed
 * over again now and then (resignalStale), and removed once processed.
 */
export const ADMISSION_HOLD_MS = 5 * 60_000;

/**
 * A processed purchase whose release has not come this long after its step stops counting: its
 * worker stopped or died within the release's batch window, or processed it without a release
 * (an activity run outside a workflow). Far above the release's own delay, which waits only for
 * the closing workflow task (worker/handover-release.ts); the sweep deletes such rows later.
 */
export const RELEASE_HOLD_MS = 2_000;

/** The rows that hold a place under the bound now: admitted within the hold, and not released long ago. */
export function holdingPlace(now: Date): Prisma.Sql {
  const admittedSince = new Date(now.getTime() - ADMISSION_HOLD_MS);
  const processedSince = new Date(now.getTime() - RELEASE_HOLD_MS);
  return Prisma.sql`admitted_at > ${admittedSince} AND (processed_at IS NULL OR processed_at > ${processedSince})`;
}

/** What an admission sees of an event it admits or hands over again. */
export interface AdmittedEvent {
  id: string;
  issuerId: string;
  chgId: string;
  externalId: string;
  workflowId: string;
  kind: string;
  state: string;
  rewardStatus: string;
  traceparent: string | null;
}

// One key for every process of the deployment (hashtextextended is stable across servers).
const ADMISSION_LOCK = Prisma.sql`SELECT pg_advisory_xact_lock(hashtextextended('rewards.handover_admission', 0))`;

/** SQL of core/domain/handover.ts's awaitsProcessing, on the event aliased `e`. */
export const AWAITS_PROCESSING = Prisma.sql`(e.reward_status = 'pending'
  OR (e.kind = 'auth' AND e.state = 'reversed' AND e.reward_status IN ('previewed', 'not_matched')))`;

const ADMITTED_EVENT_COLUMNS = Prisma.sql`e.id, e.issuer_id AS "issuerId", e.chg_id AS "chgId",
  e.external_id AS "externalId", e.workflow_id AS "workflowId", e.kind, e.state, e.reward_status AS "rewardStatus"`;

/**
 * The CTEs every admission starts with: `in_flight` is what is admitted within the hold, `room`
 * the places left. An admitted row stays until its workflow has gone idle after processing it
 * (migration 20261128600000_handover_release), so the admitted rows are exactly the purchases
 * whose workflows Temporal and the worker still have work for.
 */
function inFlightCtes(maxInFlight: number, now: Date): Prisma.Sql {
  return Prisma.sql`in_flight AS (
      SELECT event_id, issuer_id FROM handover_pending WHERE ${holdingPlace(now)}
    ), room AS (
      SELECT greatest(${maxInFlight}::int - count(*)::int, 0) AS n FROM in_flight
    )`;
}

async function underAdmissionLock<T>(db: Db, fn: (tx: SqlTx) => PromiseLike<T>): Promise<T> {
  return sqlTransaction(db, async (tx) => {
    // A new snapshot after the lock: the statement that follows sees every earlier admission.
    await tx.$queryRaw(ADMISSION_LOCK);
    return fn(tx);
  });
}

/** What an API's admission did with the events it has just stored. */
export interface StoredAdmission {
  /** Handed over now: there was room, and nothing older of their issuer waited. */
  admitted: Set<string>;
  /**
   * Left waiting only because an older event of their issuer waits, unadmitted, received within
   * CONCURRENT_WITHIN_MS before them. Concurrent requests of one issuer are stored in one order
   * and may reach the admission in another, so the older ones are usually on their way through
   * it: worth another try shortly. Behind an older backlog, they wait for the watch.
   */
  behindOlder: string[];
}

/** Events of one issuer received this close together may come from concurrent requests. */
export const CONCURRENT_WITHIN_MS = 1_000;

/**
 * Admits those of `eventIds` (just stored by this API) that may go now: still waiting, with
 * nothing older of their issuer waiting, oldest first, as many as there is room for. The rest
 * wait for the hand-over watch.
 */
export async function admitStored(
  db: Db,
  eventIds: readonly string[],
  limits: { maxInFlight: number; now: Date },
): Promise<StoredAdmission> {
  const none: StoredAdmission = { admitted: new Set(), behindOlder: [] };
  if (eventIds.length === 0) return none;
  // No lock taken when the bound is full (the usual state of an overload: the watch admits them as
  // places free up), nor for events behind an older backlog of their issuer (a settlement file
  // still waiting): the lock would only find them behind it and leave them to the watch. Taken for
  // those anyway, it queued every stored batch behind the watch's admissions, and was held while
  // the API's process served its next requests.
  const ids = await admissionCandidates(db, eventIds, limits);
  if (ids.length === 0) return none;
  const rows = await underAdmissionLock(db, (tx) =>
    tx.$queryRaw<Array<{ event_id: string; admitted: boolean }>>(Prisma.sql`
      WITH ${inFlightCtes(limits.maxInFlight, limits.now)},
      mine AS (
        SELECT p.event_id, p.issuer_id, p.queued_at FROM handover_pending p
         WHERE p.event_id = ANY(${ids}::text[]) AND p.admitted_at IS NULL
      ), heads AS (
        -- The oldest event of each issuer waiting besides these: these go only if older.
        SELECT i.issuer_id, o.queued_at, o.event_id FROM (SELECT DISTINCT issuer_id FROM mine) i
          LEFT JOIN LATERAL (
            SELECT o.queued_at, o.event_id FROM handover_pending o
             WHERE o.issuer_id = i.issuer_id AND o.admitted_at IS NULL AND o.event_id <> ALL(${ids}::text[])
             ORDER BY o.queued_at, o.event_id LIMIT 1) o ON true
      ), ordered AS (
        SELECT m.event_id, m.queued_at,
               h.event_id IS NULL OR (m.queued_at, m.event_id) < (h.queued_at, h.event_id) AS first_in_line,
               h.queued_at > m.queued_at - ${CONCURRENT_WITHIN_MS} * interval '1 millisecond' AS head_concurrent
          FROM mine m JOIN heads h ON h.issuer_id IS NOT DISTINCT FROM m.issuer_id
      ), chosen AS (
        SELECT event_id FROM ordered WHERE first_in_line ORDER BY queued_at, event_id LIMIT (SELECT n FROM room)
      ), admitted AS (
        UPDATE handover_pending p SET admitted_at = ${limits.now} FROM chosen c WHERE p.event_id = c.event_id
        RETURNING p.event_id
      )
      SELECT event_id, true AS admitted FROM admitted
      UNION ALL
      SELECT event_id, false FROM ordered WHERE NOT first_in_line AND head_concurrent`),
  );
  return {
    admitted: new Set(rows.filter((r) => r.admitted).map((r) => r.event_id)),
    behindOlder: rows.filter((r) => !r.admitted).map((r) => r.event_id),
  };
}

/**
 * Admits up to `limit` waiting events (and the room left), issuers in turn: each issuer's
 * waiting events oldest first; among issuers, the one with the fewest in flight first, and
 * between equals the next after the issuer served last (handover_turn), round the issuers in id
 * order. Returns them with what their hand-over needs.
 */
export async function admitWaiting(
  db: Db,
  limits: { maxInFlight: number; now: Date; limit: number },
): Promise<AdmittedEvent[]> {
  // Full: nothing to admit until a workflow goes idle; no lock taken (the watch looks again soon).
  if ((await countInFlight(db, limits.now)) >= limits.maxInFlight) return [];
  const admitted = await underAdmissionLock(db, (tx) =>
    tx.$queryRaw<AdmittedEvent[]>(Prisma.sql`
      WITH RECURSIVE issuers AS (
        -- Every issuer with an event waiting, one index step each (a skip scan).
        (SELECT issuer_id FROM handover_pending WHERE admitted_at IS NULL AND issuer_id IS NOT NULL
          ORDER BY issuer_id LIMIT 1)
        UNION ALL
        SELECT (SELECT p.issuer_id FROM handover_pending p
                 WHERE p.admitted_at IS NULL AND p.issuer_id > i.issuer_id ORDER BY p.issuer_id LIMIT 1)
          FROM issuers i WHERE i.issuer_id IS NOT NULL
      ), ${inFlightCtes(limits.maxInFlight, limits.now)},
      busy AS (SELECT issuer_id, count(*)::int AS n FROM in_flight GROUP BY issuer_id),
      last_served AS (SELECT coalesce(last_issuer_id, '') AS issuer_id FROM handover_turn WHERE id = 1),
      candidates AS (
        SELECT w.event_id, w.queued_at, i.issuer_id,
               coalesce(b.n, 0) + row_number() OVER (PARTITION BY i.issuer_id ORDER BY w.queued_at, w.event_id) AS turn,
               i.issuer_id <= (SELECT issuer_id FROM last_served) AS next_round
          FROM issuers i
          LEFT JOIN busy b ON b.issuer_id = i.issuer_id
          CROSS JOIN LATERAL (
            SELECT p.event_id, p.queued_at FROM handover_pending p
             WHERE p.issuer_id = i.issuer_id AND p.admitted_at IS NULL
             ORDER BY p.queued_at, p.event_id
             LIMIT least((SELECT n FROM room), ${limits.limit}::int)) w
         WHERE i.issuer_id IS NOT NULL
      ), chosen AS (
        SELECT event_id, issuer_id, row_number() OVER (ORDER BY turn, next_round, issuer_id) AS position
          FROM candidates ORDER BY turn, next_round, issuer_id
         LIMIT least((SELECT n FROM room), ${limits.limit}::int)
      ), turned AS (
        UPDATE handover_turn SET last_issuer_id = (SELECT issuer_id FROM chosen ORDER BY position DESC LIMIT 1)
         WHERE id = 1 AND EXISTS (SELECT 1 FROM chosen)
      ), admitted AS (
        UPDATE handover_pending p SET admitted_at = ${limits.now} FROM chosen c WHERE p.event_id = c.event_id
        RETURNING p.event_id, p.traceparent, p.queued_at
      )
      SELECT ${ADMITTED_EVENT_COLUMNS}, a.traceparent
        FROM admitted a JOIN ingested_event e ON e.id = a.event_id
       ORDER BY a.queued_at, a.event_id`),
  );
  return admitted;
}

/**
 * Admitted events still waiting for their step `baseMs` × 2^attempts after their admission:
 * handed over again, in case their hand-over never happened (the process that admitted them
 * died before its signals). A repeated hand-over is harmless (core/domain/handover.ts); the
 * growing interval keeps a stuck workflow from being signalled every few seconds. Their
 * admission time is kept, so the hold still ends when it would have.
 */
export async function resignalStale(
  db: Db,
  input: { baseMs: number; now: Date; limit: number },
): Promise<AdmittedEvent[]> {
  return sqlQuery<AdmittedEvent[]>(
    db,
    Prisma.sql`
    WITH stale AS (
      SELECT p.event_id FROM handover_pending p JOIN ingested_event e ON e.id = p.event_id
       WHERE p.admitted_at IS NOT NULL
         AND p.admitted_at < ${input.now}::timestamptz - ${input.baseMs} * power(2, least(p.attempts, 10)) * interval '1 millisecond'
         AND ${AWAITS_PROCESSING}
       ORDER BY p.admitted_at LIMIT ${input.limit}
       FOR UPDATE OF p SKIP LOCKED
    ), counted AS (
      UPDATE handover_pending p SET attempts = p.attempts + 1 FROM stale s WHERE p.event_id = s.event_id
      RETURNING p.event_id, p.traceparent
    )
    SELECT ${ADMITTED_EVENT_COLUMNS}, c.traceparent FROM counted c JOIN ingested_event e ON e.id = c.event_id`,
  );
}

/** Admitted events whose hand-over Temporal refused wait again (behind their issuer's older ones). */
export async function readmitRefused(db: Db, eventIds: readonly string[]): Promise<void> {
  if (eventIds.length === 0) return;
  await sqlQuery(
    db,
    // A processed row stays admitted: its step ran while the refused call was under way (a
    // time-out whose signal did arrive), and its release or the sweep removes it.
    Prisma.sql`UPDATE handover_pending SET admitted_at = NULL, attempts = attempts + 1
                WHERE event_id = ANY(${[...eventIds]}::text[]) AND processed_at IS NULL`,
  );
}

/**
 * Gives back the places of purchases processed before `processedBefore` whose workflow never
 * said it had gone idle (worker/handover-release.ts): their worker died between the step's
 * commit and the release, or ran a release without it (a roll). Returns how many.
 */
export async function releaseStranded(db: Db, processedBefore: Date): Promise<number> {
  const rows = await sqlQuery<unknown[]>(
    db,
    Prisma.sql`DELETE FROM handover_pending
                WHERE admitted_at IS NOT NULL AND processed_at < ${processedBefore} RETURNING event_id`,
  );
  return rows.length;
}

/**
 * Before an API's admission, outside the lock: none when the bound is full; otherwise those of
 * `eventIds` still waiting whose issuer has no event waiting that was received
 * CONCURRENT_WITHIN_MS or more before the issuer's oldest of them. The others could not be
 * admitted now, nor be worth another try: under the lock they would be found behind an older event
 * not concurrent with them. Read from a snapshot before the lock, so an issuer whose backlog the
 * watch admits meanwhile has its events left to the watch, as the lock would have left them a
 * moment earlier; the lock still decides the room.
 */
async function admissionCandidates(
  db: Db,
  eventIds: readonly string[],
  limits: { maxInFlight: number; now: Date },
): Promise<string[]> {
  const [row] = await sqlQuery<Array<{ open: string[] | null }>>(
    db,
    Prisma.sql`
    WITH in_flight AS (
      SELECT count(*)::int AS n FROM handover_pending WHERE ${holdingPlace(limits.now)}
    ), mine AS (
      SELECT event_id, issuer_id, queued_at FROM handover_pending
       WHERE event_id = ANY(${[...eventIds]}::text[]) AND admitted_at IS NULL
    ), oldest AS (
      SELECT issuer_id, min(queued_at) AS queued_at FROM mine GROUP BY issuer_id
    ), blocked AS (
      SELECT o.issuer_id FROM oldest o
       WHERE EXISTS (SELECT 1 FROM handover_pending w
                      WHERE w.issuer_id = o.issuer_id AND w.admitted_at IS NULL
                        AND w.queued_at <= o.queued_at - ${CONCURRENT_WITHIN_MS} * interval '1 millisecond')
    )
    SELECT CASE WHEN (SELECT n FROM in_flight) < ${limits.maxInFlight}::int
                THEN array(SELECT m.event_id FROM mine m
                            WHERE m.issuer_id IS NULL OR m.issuer_id NOT IN (SELECT issuer_id FROM blocked))
           END AS open`,
  );
  return row.open ?? [];
}

/** Purchases in flight now, as the next admission counts them. */
export async function countInFlight(db: Db, now: Date): Promise<number> {
  const [{ n }] = await sqlQuery<Array<{ n: number }>>(
    db,
    Prisma.sql`SELECT count(*)::int AS n FROM handover_pending WHERE ${holdingPlace(now)}`,
  );
  return n;
}
