// Erasure of a cardholder group (API.md, "Card data and erasure"; decision 0055): every personal
// field of the group, its cardholders and cards, its claims and adjustments replaced by a
// tombstone in ONE transaction, with the record of who asked and the chg_erased webhook. Rows
// are rewritten in place, never deleted: ledger transfers, reward events, grants and statements
// keep pointing at the same pseudonymous ids, so the books and every report read as before.
import { createHash } from 'node:crypto';
import { errors } from '../../core/errors';
import { recordFactWebhooks } from '../../core/domain/webhook-records';
import { factKey } from '../../core/webhooks/fact-webhooks';
import { deactivateGroupActivations } from '../activations/store';
import type { Db } from '../../prisma/client';
import type { ChgErasure, Prisma } from '../../prisma/generated/client';

type Tx = Prisma.TransactionClient;

export type ErasedKind = 'chg' | 'cardholder' | 'card';

/**
 * What an erased external id becomes. The space makes it an id no issuer can send (external ids
 * are visible ASCII, core/domain/external-id.ts), so it never matches an event or an upsert; the
 * row's own id keeps it unique per issuer.
 */
export const tombstone = (rowId: string): string => `erased ${rowId}`;
export const isTombstone = (externalId: string): boolean => externalId.startsWith('erased ');

/** A card's last four digits once erased: the column holds four digits (card_last4_check). */
export const ERASED_LAST4 = '0000';

/**
 * The digest an erased external id is kept as: enough to recognise a later event naming it, and
 * not the id. Scoped by issuer and kind, as the ids themselves are.
 */
export function erasedDigest(issuerId: string, kind: ErasedKind, externalId: string): string {
  return createHash('sha256').update(`${issuerId}\n${kind}\n${externalId}`).digest('hex');
}

export interface Eraser {
  issuerId: string;
  /** The API token that asked. */
  tokenId: string;
  requestId: string | null;
}

/** Erases the group, or returns the erasure that already did: asking twice is asking once. */
export async function eraseGroup(db: Db, who: Eraser, chgId: string, at: Date): Promise<ChgErasure> {
  return db.$transaction(async (tx) => {
    const group = await lockGroup(tx, who.issuerId, chgId);
    if (group.erasedAt) return tx.chgErasure.findUniqueOrThrow({ where: { chgId } });
    const people = await rememberErasedIds(tx, who.issuerId, chgId, group.externalId, at);
    const replaced = await replacePersonalFields(tx, chgId, at);
    await deactivateGroupActivations(tx, who.issuerId, chgId, at);
    const erasure = await tx.chgErasure.create({
      data: { chgId, ...who, ...people, ...replaced, erasedAt: at },
    });
    await recordFactWebhooks(tx, [
      {
        issuerId: who.issuerId,
        type: 'chg_erased',
        factKey: factKey.chgErased(chgId),
        sourceId: chgId,
        data: { chgId, erasedAt: at.toISOString() },
        at,
      },
    ]);
    return erasure;
  });
}

/**
 * Holds the group for the erasure: the upsert's advisory lock on its external id first (an
 * upsert of the same group waits, then finds the id gone and creates a new group), then its row.
 */
async function lockGroup(tx: Tx, issuerId: string, chgId: string) {
  // Filtering on issuerId makes another issuer's group indistinguishable from a missing one.
  const seen = await tx.cardholderGroup.findFirst({ where: { id: chgId, issuerId }, select: { externalId: true } });
  if (!seen) throw errors.notFound('chg_not_found', `No cardholder group ${chgId}.`);
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`chg:${issuerId}:${seen.externalId}`}, 0))`;
  const [group] = await tx.$queryRaw<Array<{ externalId: string; erasedAt: Date | null }>>`
    SELECT external_id AS "externalId", erased_at AS "erasedAt" FROM cardholder_group WHERE id = ${chgId} FOR UPDATE`;
  return group;
}

/** Keeps the digests of the group's, its cardholders' and cards' external ids. */
async function rememberErasedIds(
  tx: Tx,
  issuerId: string,
  chgId: string,
  groupExternalId: string,
  at: Date,
): Promise<{ cardholders: number; cards: number }> {
  const cardholders = await tx.cardholder.findMany({ where: { chgId }, select: { externalId: true } });
  const cards = await tx.card.findMany({ where: { chgId }, select: { externalId: true } });
  const named: Array<[ErasedKind, string]> = [
    ['chg', groupExternalId],
    ...cardholders.map((c): [ErasedKind, string] => ['cardholder', c.externalId]),
    ...cards.map((c): [ErasedKind, string] => ['card', c.externalId]),
  ];
  await tx.erasedExternalId.createMany({
    data: named
      .filter(([, externalId]) => !isTombstone(externalId))
      .map(([kind, externalId]) => ({
        issuerId,
        kind,
        digest: erasedDigest(issuerId, kind, externalId),
        chgId,
        erasedAt: at,
      })),
    // A moved cardholder's id may be remembered already, from an earlier group's erasure.
    skipDuplicates: true,
  });
  return { cardholders: cardholders.length, cards: cards.length };
}

/**
 * The tombstones, table by table. Stored events keep the purchase's facts (amount, merchant,
 * dates): their payloads lose the issuer's card references, which the event's own columns hold
 * as our ids. Claims and adjustments lose their free-text notes.
 */
async function replacePersonalFields(
  tx: Tx,
  chgId: string,
  at: Date,
): Promise<{ events: number; claims: number; adjustments: number }> {
  await tx.$executeRaw`
    UPDATE cardholder_group
       SET external_id = ${tombstone(chgId)}, settings = '{}'::jsonb, segments = '{}', status = 'inactive',
           deactivated_at = coalesce(deactivated_at, ${at}), erased_at = ${at}, updated_at = ${at}
     WHERE id = ${chgId}`;
  await tx.$executeRaw`
    UPDATE cardholder SET external_id = 'erased ' || id, status = 'inactive',
           deactivated_at = coalesce(deactivated_at, ${at}), updated_at = ${at}
     WHERE chg_id = ${chgId}`;
  await tx.$executeRaw`
    UPDATE card SET external_id = 'erased ' || id, last4 = ${ERASED_LAST4}, bin = NULL, status = 'inactive',
           deactivated_at = coalesce(deactivated_at, ${at}), updated_at = ${at}
     WHERE chg_id = ${chgId}`;
  // Found by ingested_event_card_references_idx: only events stored with the references as sent.
  const events = await tx.$executeRaw`
    UPDATE ingested_event
       SET payload = (payload - 'cardLast4') || jsonb_build_object('cardholderId', cardholder_id, 'cardId', card_id)
     WHERE chg_id = ${chgId} AND payload ? 'cardLast4'`;
  const claims = await tx.$executeRaw`
    UPDATE claim SET note = NULL, resolution_note = NULL, updated_at = ${at}
     WHERE chg_id = ${chgId} AND (note IS NOT NULL OR resolution_note IS NOT NULL)`;
  const adjustments = await tx.$executeRaw`
    UPDATE adjustment SET note = NULL WHERE chg_id = ${chgId} AND note IS NOT NULL`;
  return { events, claims, adjustments };
}

/** The erasure as the API answers it. */
export function presentErasure(erasure: ChgErasure) {
  return {
    chgId: erasure.chgId,
    status: 'erased' as const,
    erasedAt: erasure.erasedAt.toISOString(),
    tokenId: erasure.tokenId,
    requestId: erasure.requestId,
    replaced: {
      cardholders: erasure.cardholders,
      cards: erasure.cards,
      events: erasure.events,
      claims: erasure.claims,
      adjustments: erasure.adjustments,
    },
  };
}
