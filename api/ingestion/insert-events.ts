// The batch insert of ingestion, the hottest write of the service: one statement for the
// whole batch (column arrays through unnest), skipping ids already stored. Written as SQL
// because building the same insert through the ORM cost more CPU than everything else an
// ingestion request does (bench/, CPU profile); the columns are the ingested_event table's.
import type { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';

export type EventRow = Prisma.IngestedEventCreateManyInput;

const iso = (d: Date | string | null | undefined) => (d === null || d === undefined ? null : new Date(d).toISOString());

/** Inserts the rows that are new; returns the external ids it inserted. */
export async function insertNewEvents(tx: Db | Prisma.TransactionClient, rows: EventRow[]): Promise<Set<string>> {
  const col = <T>(pick: (r: EventRow) => T) => rows.map(pick);
  const inserted = await tx.$queryRaw<Array<{ external_id: string }>>`
    INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id, card_id,
      amount_minor, currency, event_created_at, authorization_external_id, related_external_id, related_event_id,
      workflow_id, received_at, handed_over_at, reward_status)
    SELECT * FROM unnest(
      ${col((r) => r.id)}::text[], ${col((r) => r.issuerId)}::text[], ${col((r) => r.kind)}::text[],
      ${col((r) => r.externalId)}::text[], ${col((r) => r.fingerprint)}::text[], ${col((r) => r.state)}::text[],
      ${col((r) => JSON.stringify(r.payload))}::jsonb[], ${col((r) => r.chgId)}::text[], ${col((r) => r.cardholderId)}::text[],
      ${col((r) => r.cardId)}::text[], ${col((r) => String(r.amountMinor))}::bigint[], ${col((r) => r.currency)}::text[],
      ${col((r) => iso(r.eventCreatedAt))}::timestamptz[], ${col((r) => r.authorizationExternalId ?? null)}::text[],
      ${col((r) => r.relatedExternalId ?? null)}::text[], ${col((r) => r.relatedEventId ?? null)}::text[],
      ${col((r) => r.workflowId)}::text[], ${col((r) => iso(r.receivedAt))}::timestamptz[],
      ${col((r) => iso(r.handedOverAt))}::timestamptz[], ${col((r) => r.rewardStatus ?? 'pending')}::text[])
    ON CONFLICT (issuer_id, kind, external_id) DO NOTHING
    RETURNING external_id`;
  return new Set(inserted.map((r) => r.external_id));
}
