// Resolves the cardholder and card named by events (the issuer's externalIds or our
// ch_/card_ ids) for one issuer, with one statement per batch whatever its size.
import { isId } from '../../core/ids';
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import type { IngestedEvent } from './schemas';
import { erasedDigest, isTombstone, type ErasedKind } from '../chg/erase';

export interface ResolvedCard {
  chgId: string;
  cardholderId: string;
  cardId: string;
  /** What the card record holds, to compare with the event's cardLast4 and network. */
  last4: string;
  network: string;
}

export type ResolutionFailure = 'unknown_cardholder' | 'unknown_card' | 'card_cardholder_mismatch' | 'chg_erased';
export type Resolution = { ok: true; card: ResolvedCard } | { ok: false; reason: ResolutionFailure };

/** The cards a batch names, loaded once; resolving one event is a lookup. */
export interface CardDirectory {
  /**
   * `preferChgId`: when the issuer's ids have records in several groups (the cardholder
   * moved), the record in this group wins. A refund passes its purchase's group, so the
   * refund of a purchase made before the move is booked where the purchase was.
   */
  resolve(event: IngestedEvent, preferChgId?: string): Resolution;
}

interface CardholderRow {
  id: string;
  chgId: string;
  externalId: string;
  status: string;
  updatedAt: Date;
}
interface CardRow {
  id: string;
  cardholderId: string;
  externalId: string;
  last4: string;
  network: string;
}
type Row = {
  kind: 'cardholder' | 'card';
  id: string;
  externalId: string;
  chgId: string | null;
  status: string | null;
  updatedAt: Date | null;
  cardholderId: string | null;
  last4: string | null;
  network: string | null;
};

// Cardholders and cards in one statement: a batch costs one round trip to resolve. Named
// (prisma/hot.ts): it runs on every ingestion request. Each reference is looked up by the
// index made for it: our ids by primary key alone (OFFSET 0 keeps the issuer check out of the
// index choice), the issuer's ids by (issuer, external id). Written as one OR, the generic
// plan made without statistics read every card of the issuer per batch
// (test/api/hot-plans.test.ts). UNION, as the OR did, lists a row found both ways once.
export const CARD_DIRECTORY: HotStatement = {
  name: 'ingestion_card_directory_v2',
  text: `SELECT 'cardholder' AS kind, id, external_id AS "externalId", chg_id AS "chgId", status, updated_at AS "updatedAt",
                NULL::text AS "cardholderId", NULL::text AS last4, NULL::text AS network
           FROM (SELECT * FROM cardholder WHERE id = ANY($2::text[]) OFFSET 0) byId WHERE issuer_id = $1
         UNION
         SELECT 'cardholder', id, external_id, chg_id, status, updated_at, NULL, NULL, NULL
           FROM cardholder WHERE issuer_id = $1 AND external_id = ANY($3::text[])
         UNION
         SELECT 'card', id, external_id, NULL, NULL, NULL, cardholder_id, last4, network
           FROM (SELECT * FROM card WHERE id = ANY($4::text[]) OFFSET 0) byId WHERE issuer_id = $1
         UNION
         SELECT 'card', id, external_id, NULL, NULL, NULL, cardholder_id, last4, network
           FROM card WHERE issuer_id = $1 AND external_id = ANY($5::text[])`,
};

export async function loadCardDirectory(db: Db, issuerId: string, events: IngestedEvent[]): Promise<CardDirectory> {
  const refs = [...new Set(events.map((e) => e.cardholderId))];
  const cardRefs = [...new Set(events.map((e) => e.cardId))];
  const rows = await hotQuery<Row>(db, CARD_DIRECTORY, [
    issuerId,
    refs.filter((r) => isId('ch', r)),
    refs,
    cardRefs.filter((r) => isId('card', r)),
    cardRefs,
  ]);
  const cardholders = rows.filter((r) => r.kind === 'cardholder') as CardholderRow[];
  const cards = rows.filter((r) => r.kind === 'card') as CardRow[];
  const answered = new Set(rows.flatMap((r) => [`${r.kind}:${r.id}`, `${r.kind}:${r.externalId}`]));
  const erased = await erasedAmong(db, issuerId, {
    cardholder: refs.filter((r) => !answered.has(`cardholder:${r}`)),
    card: cardRefs.filter((r) => !answered.has(`card:${r}`)),
  });
  const byId = new Map(cardholders.map((c) => [c.id, c]));
  // An externalId may have rows in several groups (it moved): all are kept, best first (the
  // active one, else the one touched last), so a preferred group can still pick its own.
  const byExternal = new Map<string, CardholderRow[]>();
  for (const c of cardholders) byExternal.set(c.externalId, [...(byExternal.get(c.externalId) ?? []), c]);
  for (const rows of byExternal.values()) rows.sort((a, b) => rank(b) - rank(a));
  // Cards by the names an event may use (our id or the issuer's), so each event is a lookup.
  const cardsByName = new Map<string, CardRow[]>();
  for (const card of cards) {
    for (const name of new Set([card.id, card.externalId]))
      cardsByName.set(name, [...(cardsByName.get(name) ?? []), card]);
  }
  return {
    resolve(event, preferChgId) {
      const own = byId.get(event.cardholderId);
      // An erased group's rows keep our ids but not the issuer's: named by either, it is refused.
      if (own && isTombstone(own.externalId)) return { ok: false, reason: 'chg_erased' };
      const named = own ? [own] : (byExternal.get(event.cardholderId) ?? []);
      if (named.length === 0)
        return {
          ok: false,
          reason: erased.has(`cardholder:${event.cardholderId}`) ? 'chg_erased' : 'unknown_cardholder',
        };
      // The preferred group's record if the card is there too, else the best record as always
      // (a refund on a card issued after the move resolves to the new group, and is refused).
      const tried = [named.find((c) => preferChgId !== undefined && c.chgId === preferChgId), named[0]];
      const candidates = cardsByName.get(event.cardId) ?? [];
      for (const cardholder of tried) {
        const card = cardholder && candidates.find((k) => k.cardholderId === cardholder.id);
        if (cardholder && card) {
          return {
            ok: true,
            card: {
              chgId: cardholder.chgId,
              cardholderId: cardholder.id,
              cardId: card.id,
              last4: card.last4,
              network: card.network,
            },
          };
        }
      }
      if (candidates.some((k) => isTombstone(k.externalId)) || erased.has(`card:${event.cardId}`))
        return { ok: false, reason: 'chg_erased' };
      return { ok: false, reason: candidates.length > 0 ? 'card_cardholder_mismatch' : 'unknown_card' };
    },
  };
}

/**
 * Which of the references no row answered are erased external ids (`kind:reference`). Read only
 * when some reference is unknown, so a batch of known cards costs no second statement.
 */
async function erasedAmong(db: Db, issuerId: string, unknown: Record<'cardholder' | 'card', string[]>) {
  const digests = new Map<string, string>();
  for (const kind of ['cardholder', 'card'] as const)
    for (const ref of unknown[kind])
      digests.set(erasedDigest(issuerId, kind satisfies ErasedKind, ref), `${kind}:${ref}`);
  if (digests.size === 0) return new Set<string>();
  const found = await db.erasedExternalId.findMany({
    where: { issuerId, digest: { in: [...digests.keys()] } },
    select: { digest: true },
  });
  // The digest covers the kind, so it names one reference.
  return new Set(found.map((f) => digests.get(f.digest)!));
}

function rank(c: CardholderRow): number {
  return (c.status === 'active' ? 1e15 : 0) + c.updatedAt.getTime();
}
