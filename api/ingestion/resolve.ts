// Resolves the cardholder and card named by events (the issuer's externalIds or our
// ch_/card_ ids) for one issuer, with one statement per batch whatever its size.
import { isId } from '../../core/ids';
import type { Db } from '../../prisma/client';
import type { IngestedEvent } from './schemas';

export interface ResolvedCard {
  chgId: string;
  cardholderId: string;
  cardId: string;
}

export type Resolution = { ok: true; card: ResolvedCard } | { ok: false; reason: 'unknown_cardholder' | 'unknown_card' | 'card_cardholder_mismatch' };

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
}

export async function resolveCards(db: Db, issuerId: string, events: IngestedEvent[]): Promise<Resolution[]> {
  const refs = [...new Set(events.map((e) => e.cardholderId))];
  const cardRefs = [...new Set(events.map((e) => e.cardId))];
  // Cardholders and cards in one statement: a batch costs one round trip to resolve.
  const rows = await db.$queryRaw<Array<{ kind: 'cardholder' | 'card'; id: string; externalId: string; chgId: string | null; status: string | null; updatedAt: Date | null; cardholderId: string | null }>>`
    SELECT 'cardholder' AS kind, id, external_id AS "externalId", chg_id AS "chgId", status, updated_at AS "updatedAt", NULL AS "cardholderId"
      FROM cardholder WHERE issuer_id = ${issuerId} AND (id = ANY(${refs.filter((r) => isId('ch', r))}::text[]) OR external_id = ANY(${refs}::text[]))
    UNION ALL
    SELECT 'card', id, external_id, NULL, NULL, NULL, cardholder_id
      FROM card WHERE issuer_id = ${issuerId} AND (id = ANY(${cardRefs.filter((r) => isId('card', r))}::text[]) OR external_id = ANY(${cardRefs}::text[]))`;
  const cardholders = rows.filter((r) => r.kind === 'cardholder') as CardholderRow[];
  const cards = rows.filter((r) => r.kind === 'card') as CardRow[];
  const byId = new Map(cardholders.map((c) => [c.id, c]));
  // An externalId may have rows in several groups (it moved); the active one wins, else
  // the one touched last.
  const byExternal = new Map<string, CardholderRow>();
  for (const c of cardholders) {
    const seen = byExternal.get(c.externalId);
    if (!seen || rank(c) > rank(seen)) byExternal.set(c.externalId, c);
  }
  // Cards by the names an event may use (our id or the issuer's), so each event is a lookup.
  const cardsByName = new Map<string, CardRow[]>();
  for (const card of cards) {
    for (const name of new Set([card.id, card.externalId])) cardsByName.set(name, [...(cardsByName.get(name) ?? []), card]);
  }
  return events.map((event) => {
    const cardholder = byId.get(event.cardholderId) ?? byExternal.get(event.cardholderId);
    if (!cardholder) return { ok: false, reason: 'unknown_cardholder' };
    const named = cardsByName.get(event.cardId) ?? [];
    const card = named.find((k) => k.cardholderId === cardholder.id);
    if (card) return { ok: true, card: { chgId: cardholder.chgId, cardholderId: cardholder.id, cardId: card.id } };
    return { ok: false, reason: named.length > 0 ? 'card_cardholder_mismatch' : 'unknown_card' };
  });
}

function rank(c: CardholderRow): number {
  return (c.status === 'active' ? 1e15 : 0) + c.updatedAt.getTime();
}
