// The batch insert of ingestion, the hottest write of the service: one statement for the
// whole batch (column arrays through unnest), skipping ids already stored. Written as SQL
// because building the same insert through the ORM cost more CPU than everything else an
// ingestion request does (bench/, CPU profile), and run on our pg pool as a prepared
// statement, because Prisma's raw query path still cost a tenth of the request's CPU; the
// columns are the ingested_event table's.
import type { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';

export type EventRow = Prisma.IngestedEventCreateManyInput;

const iso = (d: Date | string | null | undefined) => (d === null || d === undefined ? null : new Date(d).toISOString());

// Named, so PostgreSQL parses and plans it once per connection (prisma/hot.ts). What every row
// of a batch shares (issuer, kind, receipt time) is one parameter; the rest is one array per
// column, in the INSERT's column order, and the payloads one JSON array: unlike an array of
// jsonb texts, it needs no escaping on the way out (pg's array writer was a tenth of the
// request's CPU, bench/ profile). ROWS FROM zips the arrays by position. The same statement
// queues every new event that waits for processing (handover_pending): an event is never
// stored without its place in the hand-over queue. handed_over_at is deprecated and set to
// the receipt time: the pending-hand-over index then holds only events that APIs of the
// previous release stored (the sweeper adopts those into the queue). The receipt time is on the
// issuer's clock, days ahead for a sandbox issuer that moved its clock, so the queue's time is
// real time: the age of what waits is real time (GET /api/v2/ingestion/lag,
// rewards_handover_oldest_seconds), and the same instant for a production issuer.
const INSERT_NEW_EVENTS: HotStatement = {
  name: 'ingestion_insert_new_events_v6',
  text: `WITH inserted AS (
           INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
             card_id, amount_minor, currency, event_created_at, authorization_external_id, related_external_id,
             related_event_id, workflow_id, received_at, reward_status, handed_over_at)
           SELECT x.id, $1::text, $2::text, x.external_id, x.fingerprint, x.state, x.payload, x.chg_id, x.cardholder_id,
                  x.card_id, x.amount_minor, x.currency, x.event_created_at, x.authorization_external_id,
                  x.related_external_id, x.related_event_id, x.workflow_id, $3::timestamptz, x.reward_status, $3::timestamptz
             FROM ROWS FROM (unnest($4::text[]), unnest($5::text[]), unnest($6::text[]), unnest($7::text[]),
               jsonb_array_elements($8::jsonb), unnest($9::text[]), unnest($10::text[]), unnest($11::text[]),
               unnest($12::bigint[]), unnest($13::text[]), unnest($14::timestamptz[]), unnest($15::text[]),
               unnest($16::text[]), unnest($17::text[]), unnest($18::text[]), unnest($19::text[]))
               AS x(id, external_id, fingerprint, state, payload, chg_id, cardholder_id, card_id, amount_minor, currency,
                    event_created_at, authorization_external_id, related_external_id, related_event_id, workflow_id,
                    reward_status)
           ON CONFLICT (issuer_id, kind, external_id) DO NOTHING
           RETURNING id, external_id, reward_status
         ), queued AS (
           INSERT INTO handover_pending (event_id, queued_at, traceparent, issuer_id)
           SELECT id, $21::timestamptz, $20::text, $1::text FROM inserted WHERE reward_status = 'pending'
         )
         SELECT external_id FROM inserted`,
};

/** What every row of one insert shares. */
export interface BatchHeader {
  issuerId: string;
  kind: string;
  receivedAt: Date;
  /** The same instant in real time (without a sandbox issuer's clock offset): when its events join the hand-over queue. */
  queuedAt: Date;
  /** The storing request's trace, kept with the hand-over queue rows (core/tracing.ts); null when not traced. */
  traceparent?: string | null;
}

/** Inserts the rows that are new (all of one issuer, kind and receipt time); returns the external ids it inserted. */
export async function insertNewEvents(db: Db, header: BatchHeader, rows: EventRow[]): Promise<Set<string>> {
  const receivedMs = header.receivedAt.getTime();
  for (const r of rows) {
    const sameTime = r.receivedAt === header.receivedAt || new Date(r.receivedAt!).getTime() === receivedMs;
    if (r.issuerId !== header.issuerId || r.kind !== header.kind || !sameTime)
      throw new Error(`insertNewEvents: row ${r.externalId} is not of the batch's issuer, kind and receipt time`);
  }
  const col = <T>(pick: (r: EventRow) => T) => rows.map(pick);
  const inserted = await hotQuery<{ external_id: string }>(db, INSERT_NEW_EVENTS, [
    header.issuerId,
    header.kind,
    header.receivedAt.toISOString(),
    col((r) => r.id),
    col((r) => r.externalId),
    col((r) => r.fingerprint),
    col((r) => r.state),
    `[${col((r) => JSON.stringify(r.payload)).join(',')}]`,
    col((r) => r.chgId),
    col((r) => r.cardholderId),
    col((r) => r.cardId),
    col((r) => String(r.amountMinor)),
    col((r) => r.currency),
    col((r) => iso(r.eventCreatedAt)),
    col((r) => r.authorizationExternalId ?? null),
    col((r) => r.relatedExternalId ?? null),
    col((r) => r.relatedEventId ?? null),
    col((r) => r.workflowId),
    col((r) => r.rewardStatus ?? 'pending'),
    header.traceparent ?? null,
    header.queuedAt.toISOString(),
  ]);
  return new Set(inserted.map((r) => r.external_id));
}

// A reversal is handed over again: the state change and its place in the queue are one
// statement, so no crash can record one without the other. Conditional, so two concurrent
// reversals record one state change. It waits for admission again, even when its authorization
// is still in flight: the reversal is a new hand-over (core/domain/handover-admission.ts). The
// authorization's row may still be there, processed and awaiting its release: it waits again.
// The state changes on the issuer's clock, the queue's time is real time, as for a new event.
const REVERSE_AUTHORIZATION: HotStatement = {
  name: 'ingestion_reverse_authorization_v4',
  text: `WITH changed AS (
           UPDATE ingested_event SET state = 'reversed', state_changed_at = $2
            WHERE id = $1 AND state = 'approved'
           RETURNING id, issuer_id
         ), queued AS (
           INSERT INTO handover_pending (event_id, queued_at, issuer_id) SELECT id, $3, issuer_id FROM changed
           ON CONFLICT (event_id) DO UPDATE SET queued_at = EXCLUDED.queued_at, issuer_id = EXCLUDED.issuer_id,
             admitted_at = NULL, processed_at = NULL
         )
         SELECT id FROM changed`,
};

/**
 * Records the reversal of an approved authorization (`now` on the issuer's clock, `queuedAt` the
 * same instant in real time); false when it was not approved (any more).
 */
export async function reverseAuthorization(db: Db, eventId: string, now: Date, queuedAt: Date): Promise<boolean> {
  const changed = await hotQuery<{ id: string }>(db, REVERSE_AUTHORIZATION, [
    eventId,
    now.toISOString(),
    queuedAt.toISOString(),
  ]);
  return changed.length === 1;
}
