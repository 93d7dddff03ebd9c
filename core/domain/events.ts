// An ingested card event as the issuer sends it (SPEC.md 4.4, API.md "Ingestion"): the type
// the API validates into (api/ingestion/schemas.ts holds its JSON schemas) and the lifecycle's
// activities read back from the stored payload. Below both, so neither imports the other.
export const CARD_NETWORKS = ['visa', 'mastercard', 'amex', 'discover', 'other'] as const;

export const AUTH_METHODS = [
  'chip',
  'contactless',
  'swipe',
  'manual_entry',
  'ecommerce',
  'recurring',
  'other',
] as const;
export const AUTH_STATES = ['approved', 'declined', 'reversed'] as const;
export const SETTLED_STATES = ['settled', 'refunded'] as const;
// A trillion minor units (ten billion dollars) bounds one card transaction with room to
// spare and keeps every sum we make far inside the safe integer range.
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;

export type EventKind = 'auth' | 'settled';

export interface BaseEvent {
  id: string;
  amount: number;
  currency: string;
  merchantDescriptor: string;
  mcc: string;
  createdAt: string;
  cardLast4: string;
  network: (typeof CARD_NETWORKS)[number];
  cardholderId: string;
  cardId: string;
  authMethod: (typeof AUTH_METHODS)[number];
  merchantId?: string;
}
export interface AuthEvent extends BaseEvent {
  state: (typeof AUTH_STATES)[number];
}
export interface SettledEvent extends BaseEvent {
  state: (typeof SETTLED_STATES)[number];
  arn?: string;
  settledAt?: string;
  authorizationId?: string;
  relatedTransactionId?: string;
}
export type IngestedEvent = AuthEvent | SettledEvent;
