// Ingested event schemas (SPEC.md 4.4, API.md "Ingestion"). Each event of a batch is
// validated on its own so that one bad event fails alone.
import { CARD_NETWORKS } from '../chg/schemas';
import { errorObjectSchema, externalIdSchema } from '../schemas/common';

export const MAX_EVENTS_PER_BATCH = 1000;
export const AUTH_METHODS = ['chip', 'contactless', 'swipe', 'manual_entry', 'ecommerce', 'recurring', 'other'] as const;
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

const baseProperties = {
  id: { ...externalIdSchema, description: "The issuer's stable id of this event; the idempotency key with the event kind." },
  amount: { type: 'integer', minimum: 1, maximum: MAX_AMOUNT_MINOR, description: 'Positive, in minor units (cents).' },
  currency: { type: 'string', pattern: '^[a-z]{3}$', description: 'Lowercase ISO 4217 code. Only usd earns; others end not_matched.' },
  merchantDescriptor: { type: 'string', minLength: 1, maxLength: 256 },
  mcc: { type: 'string', pattern: '^[0-9]{4}$', description: 'Merchant category code.' },
  createdAt: { type: 'string', format: 'date-time', description: 'ISO 8601 with an offset.' },
  cardLast4: { type: 'string', pattern: '^[0-9]{4}$' },
  network: { type: 'string', enum: CARD_NETWORKS },
  cardholderId: { type: 'string', minLength: 1, maxLength: 128, description: "The issuer's cardholder id (externalId) or our ch_ id." },
  cardId: { type: 'string', minLength: 1, maxLength: 128, description: "The issuer's card id (externalId) or our card_ id." },
  authMethod: { type: 'string', enum: AUTH_METHODS },
  merchantId: {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    description: 'Production: merchant id of the ISO 8583 message. Sandbox: an mp_ id forces a match to that merchant.',
  },
};
const baseRequired = ['id', 'amount', 'currency', 'merchantDescriptor', 'mcc', 'createdAt', 'cardLast4', 'network', 'cardholderId', 'cardId', 'authMethod', 'state'];

export const authEventSchema = {
  type: 'object',
  additionalProperties: false,
  required: baseRequired,
  properties: {
    ...baseProperties,
    state: { type: 'string', enum: AUTH_STATES, description: 'Send the same id again with reversed to reverse the authorization.' },
  },
};

export const settledEventSchema = {
  type: 'object',
  additionalProperties: false,
  required: baseRequired,
  properties: {
    ...baseProperties,
    state: { type: 'string', enum: SETTLED_STATES },
    arn: { type: 'string', minLength: 1, maxLength: 64, description: 'Acquirer reference number, where available.' },
    settledAt: { type: 'string', format: 'date-time' },
    authorizationId: { ...externalIdSchema, description: "The issuer's id of the related authorization event." },
    relatedTransactionId: { ...externalIdSchema, description: "For refunds: the issuer's id of the settled purchase." },
  },
  if: { properties: { state: { const: 'refunded' } }, required: ['state'] },
  then: { required: ['relatedTransactionId'], properties: { relatedTransactionId: { type: 'string' } } },
};

/** One event or 1..1000 of them; each event is validated separately afterwards. */
export function batchSchema(eventSchema: object) {
  return {
    description: `One event object or an array of 1 to ${MAX_EVENTS_PER_BATCH} events.`,
    oneOf: [
      { ...eventSchema },
      { type: 'array', minItems: 1, maxItems: MAX_EVENTS_PER_BATCH, items: { type: 'object' } },
    ],
  };
}

export const failureEntrySchema = {
  type: 'object',
  required: ['index', 'id', 'error'],
  properties: {
    index: { type: 'integer', description: 'Position of the event in the submitted array (0 for a single event).' },
    id: { type: ['string', 'null'], description: "The event's id when it had a readable one." },
    error: errorObjectSchema,
  },
};

export const failuresSchema = { type: 'array', items: failureEntrySchema };
