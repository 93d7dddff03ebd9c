// Builders of ingestion events for a stored group, and the events as ingestion stored them.
import { randomUUID } from 'node:crypto';
import type { Db } from '../../prisma/client';

export interface CardRef {
  cardholderId: string;
  cardId: string;
  last4: string;
}

export function cardOf(group: any, cardholder = 0, card = 0): CardRef {
  const ch = group.cardholders[cardholder];
  return { cardholderId: ch.externalId, cardId: ch.cards[card].externalId, last4: ch.cards[card].last4 };
}

export function authEvent(card: CardRef, overrides: Record<string, unknown> = {}) {
  return {
    id: `auth-${randomUUID()}`,
    amount: 2500,
    currency: 'usd',
    merchantDescriptor: 'SQ *BLUE BOTTLE 123',
    mcc: '5814',
    createdAt: new Date().toISOString(),
    cardLast4: card.last4,
    network: 'visa',
    cardholderId: card.cardholderId,
    cardId: card.cardId,
    authMethod: 'contactless',
    state: 'approved',
    ...overrides,
  };
}

export function settledEvent(card: CardRef, overrides: Record<string, unknown> = {}) {
  return {
    ...authEvent(card),
    id: `txn-${randomUUID()}`,
    state: 'settled',
    settledAt: new Date().toISOString(),
    ...overrides,
  };
}

/** The event as ingestion stored it, found by the id its issuer gave it. */
export function storedEvent(db: Db, issuerId: string, kind: 'auth' | 'settled', externalId: string) {
  return db.ingestedEvent.findUniqueOrThrow({ where: { issuerId_kind_externalId: { issuerId, kind, externalId } } });
}
