// An ingested card event as the issuer sends it (SPEC.md 4.4, API.md "Ingestion"): its JSON
// schemas and the types derived from them (core/validated.ts). The API validates each event
// against these schemas (api/ingestion/schemas.ts publishes them under their component names)
// and the lifecycle's activities read the stored payload back as these types. Below both, so
// neither imports the other, and one declaration, so the schema and the type cannot drift.
import { externalIdSchema } from './external-id';
import type { Validated } from '../validated';

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

const baseProperties = {
  id: {
    ...externalIdSchema,
    description: "The issuer's stable id of this event; the idempotency key with the event kind.",
  },
  amount: { type: 'integer', minimum: 1, maximum: MAX_AMOUNT_MINOR, description: 'Positive, in minor units (cents).' },
  currency: {
    type: 'string',
    pattern: '^[a-z]{3}$',
    description: 'Lowercase ISO 4217 code. Only usd earns; others end not_matched.',
  },
  merchantDescriptor: { type: 'string', minLength: 1, maxLength: 256 },
  mcc: { type: 'string', pattern: '^[0-9]{4}$', description: 'Merchant category code.' },
  createdAt: { type: 'string', format: 'date-time', description: 'ISO 8601 with an offset.' },
  cardLast4: { type: 'string', pattern: '^[0-9]{4}$' },
  network: { type: 'string', enum: CARD_NETWORKS },
  cardholderId: {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    description: "The issuer's cardholder id (externalId) or our ch_ id.",
  },
  cardId: {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    description: "The issuer's card id (externalId) or our card_ id.",
  },
  authMethod: { type: 'string', enum: AUTH_METHODS },
  merchantId: {
    type: 'string',
    minLength: 1,
    maxLength: 128,
    description:
      'Merchant id of the ISO 8583 message, matched against the catalogue with the descriptor and MCC. Sandbox only: an mp_ id forces a match to that merchant.',
  },
} as const;

const baseRequired = [
  'id',
  'amount',
  'currency',
  'merchantDescriptor',
  'mcc',
  'createdAt',
  'cardLast4',
  'network',
  'cardholderId',
  'cardId',
  'authMethod',
  'state',
] as const;

export const authEventShape = {
  type: 'object',
  additionalProperties: false,
  required: baseRequired,
  properties: {
    ...baseProperties,
    state: {
      type: 'string',
      enum: AUTH_STATES,
      description: 'Send the same id again with reversed to reverse the authorization.',
    },
  },
} as const;

export const settledEventShape = {
  type: 'object',
  additionalProperties: false,
  required: baseRequired,
  properties: {
    ...baseProperties,
    state: { type: 'string', enum: SETTLED_STATES },
    arn: { type: 'string', minLength: 1, maxLength: 64, description: 'Acquirer reference number, where available.' },
    settledAt: { type: 'string', format: 'date-time' },
    authorizationId: { ...externalIdSchema, description: "The issuer's id of the related authorization event." },
    relatedTransactionId: {
      ...externalIdSchema,
      description:
        "Refunds only: the issuer's id of the settled purchase, required when state is refunded. On a settled purchase the " +
        'event is refused (invalid_event): the field would mean nothing there.',
    },
  },
  // relatedTransactionId belongs to refunds: required on one, refused on a purchase (docs/decisions/0016-ingestion-identity-and-consistency.md). Written as schema so that /openapi.json says it too.
  if: { properties: { state: { const: 'refunded' } }, required: ['state'] },
  then: { required: ['relatedTransactionId'], properties: { relatedTransactionId: { type: 'string' } } },
  else: { properties: { relatedTransactionId: false } },
} as const;

export type AuthEvent = Validated<typeof authEventShape>;
export type SettledEvent = Validated<typeof settledEventShape>;
export type IngestedEvent = AuthEvent | SettledEvent;
/** What every event carries, whatever its kind. */
export type BaseEvent = Omit<AuthEvent, 'state'>;
