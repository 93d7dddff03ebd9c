// Ingested event schemas (SPEC.md 4.4, API.md "Ingestion"). Each event of a batch is
// validated on its own so that one bad event fails alone.
import { CARD_NETWORKS } from '../chg/schemas';
import { AUTH_METHODS, AUTH_STATES, MAX_AMOUNT_MINOR, SETTLED_STATES } from '../../core/domain/events';
import { errorObjectSchema, externalIdSchema, openEnum } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const MAX_EVENTS_PER_BATCH = 1000;
// The event types and their closed lists live below both the API and the worker's
// activities (core/domain/events.ts); these are their JSON schemas.
export { AUTH_METHODS, AUTH_STATES, SETTLED_STATES, MAX_AMOUNT_MINOR } from '../../core/domain/events';
export type { EventKind, BaseEvent, AuthEvent, SettledEvent, IngestedEvent } from '../../core/domain/events';

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
    description: 'Production: merchant id of the ISO 8583 message. Sandbox: an mp_ id forces a match to that merchant.',
  },
};
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
];

// The README's sandbox purchase: $25.00 at Blue Bottle Coffee, forced to its mp_ id.
const exampleEvent = {
  amount: 2500,
  currency: 'usd',
  merchantDescriptor: 'SQ *BLUE BOTTLE',
  mcc: '5814',
  createdAt: EXAMPLE_TIME,
  cardLast4: '4242',
  network: 'visa',
  cardholderId: 'c-1001',
  cardId: 'k-9001',
  authMethod: 'contactless',
  merchantId: exampleId('mp'),
};

export const authEventSchema = named(
  'AuthEvent',
  {
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
  },
  { id: 'a-1', ...exampleEvent, state: 'approved' },
);

export const settledEventSchema = named(
  'SettledEvent',
  {
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
    // relatedTransactionId belongs to refunds: required on one, refused on a purchase (README,
    // "Decisions where the documents were silent"). Written as schema so that /openapi.json says it too.
    if: { properties: { state: { const: 'refunded' } }, required: ['state'] },
    then: { required: ['relatedTransactionId'], properties: { relatedTransactionId: { type: 'string' } } },
    else: { properties: { relatedTransactionId: false } },
  },
  { id: 't-1', ...exampleEvent, state: 'settled', settledAt: EXAMPLE_TIME, authorizationId: 'a-1' },
);

/** What the field errors say where ajv's own words ("boolean schema is false") would not help. */
export const settledRuleMessages: Record<string, string> = {
  '#/else/properties/relatedTransactionId/false schema': 'is only allowed when state is refunded',
};

/**
 * Per-event failure reasons (API.md "Ingestion", and README's decisions for inconsistent
 * data): the `reasonCode` of a failure entry's error. /openapi.json lists them from here.
 */
export const EVENT_FAILURE_REASONS = {
  invalid_event: 'The event breaks the schema; details.errors names the fields.',
  unknown_cardholder: 'No cardholder with that id for this issuer.',
  unknown_card: 'No card with that id for this issuer.',
  card_cardholder_mismatch: 'The card does not belong to the cardholder.',
  card_details_mismatch:
    "cardLast4 or network is not what the card holds; details.errors names the field and the card's value.",
  id_conflict: 'The id was already received with other content.',
  unknown_related_transaction: 'A refund names no settled purchase of this issuer.',
  related_transaction_mismatch: "A refund's card is in another cardholder group than the purchase it refunds.",
} as const;
export type EventFailureReason = keyof typeof EVENT_FAILURE_REASONS;

export const eventFailureReasonList = (Object.keys(EVENT_FAILURE_REASONS) as EventFailureReason[]).join(', ');

export const failureEntrySchema = named('EventFailure', {
  type: 'object',
  required: ['index', 'id', 'error'],
  properties: {
    index: { type: 'integer', description: 'Position of the event in the submitted array (0 for a single event).' },
    id: { type: ['string', 'null'], description: "The event's id when it had a readable one." },
    error: named('EventFailureError', {
      ...errorObjectSchema,
      properties: {
        ...errorObjectSchema.properties,
        reasonCode: openEnum(
          Object.keys(EVENT_FAILURE_REASONS),
          'Why this event was not accepted: ' +
            Object.entries(EVENT_FAILURE_REASONS)
              .map(([code, meaning]) => `${code} (${meaning})`)
              .join('; ') +
            '.',
        ),
      },
    }),
  },
});

export const failuresSchema = named('EventFailures', { type: 'array', items: failureEntrySchema }, [
  {
    index: 1,
    id: 't-2',
    error: {
      code: 40000,
      httpStatusCode: 400,
      uuid: exampleId('err'),
      message: 'No card with that id for this issuer.',
      name: 'validation_failed',
      reasonCode: 'unknown_card',
      details: { errors: [{ path: '/1/cardId', message: 'is not a card of this issuer' }] },
    },
  },
]);
