// Stored rows → the group representation of API.md.
import type { Card, Cardholder, CardholderGroup } from '../../prisma/generated/client';

export type GroupRow = CardholderGroup & { cardholders: Array<Cardholder & { cards: Card[] }> };

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const byPosition = (a: { position: number }, b: { position: number }) => a.position - b.position;

export function presentGroup(group: GroupRow) {
  return {
    id: group.id,
    externalId: group.externalId,
    status: group.status,
    settings: group.settings,
    segments: group.segments,
    createdAt: group.createdAt.toISOString(),
    updatedAt: group.updatedAt.toISOString(),
    deactivatedAt: iso(group.deactivatedAt),
    erasedAt: iso(group.erasedAt),
    cardholders: [...group.cardholders].sort(byPosition).map((ch) => ({
      id: ch.id,
      externalId: ch.externalId,
      status: ch.status,
      deactivatedAt: iso(ch.deactivatedAt),
      cards: [...ch.cards].sort(byPosition).map((card) => ({
        id: card.id,
        externalId: card.externalId,
        last4: card.last4,
        bin: card.bin,
        network: card.network,
        status: card.status,
        deactivatedAt: iso(card.deactivatedAt),
      })),
    })),
  };
}
