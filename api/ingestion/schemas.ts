// Ingested event schemas (SPEC.md 4.4, API.md "Ingestion"). Each event of a batch is
// validated on its own so that one bad event fails alone.
import { authEventShape, settledEventShape, type AuthEvent, type SettledEvent } from '../../core/domain/events';
import { errorObjectSchema, openEnum } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const MAX_EVENTS_PER_BATCH = 1000;
// The event schemas, their types and closed lists live below both the API and the worker's
// activities (core/domain/events.ts); here they get their published names and examples.
export { AUTH_METHODS, AUTH_STATES, SETTLED_STATES, MAX_AMOUNT_MINOR } from '../../core/domain/events';
export type { EventKind, BaseEvent, AuthEvent, SettledEvent, IngestedEvent } from '../../core/domain/events';

// The README walk-through's sandbox purchase: $25.00 at Blue Bottle Coffee, forced to its mp_ id.
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
} as const;

const authExample: AuthEvent = { id: 'a-1', ...exampleEvent, state: 'approved' };
const settledExample: SettledEvent = {
  id: 't-1',
  ...exampleEvent,
  state: 'settled',
  settledAt: EXAMPLE_TIME,
  authorizationId: 'a-1',
};

export const authEventSchema = named('AuthEvent', authEventShape, authExample);
export const settledEventSchema = named('SettledEvent', settledEventShape, settledExample);

/** What the field errors say where ajv's own words ("boolean schema is false") would not help. */
export const settledRuleMessages: Record<string, string> = {
  '#/else/properties/relatedTransactionId/false schema': 'is only allowed when state is refunded',
};

/**
 * Per-event failure reasons (API.md "Ingestion", and for inconsistent data
 * docs/decisions/0016-ingestion-identity-and-consistency.md): the `reasonCode` of a failure entry's error. /openapi.json lists them from here.
 */
export const EVENT_FAILURE_REASONS = {
  invalid_event: 'The event breaks the schema; details.errors names the fields.',
  pan_detected:
    'A field holds a card number (13 to 19 digits passing the Luhn check): details.errors names the field, never the ' +
    'value; nothing of the event is stored, and its id is not echoed when it is the field.',
  unknown_cardholder: 'No cardholder with that id for this issuer.',
  unknown_card: 'No card with that id for this issuer.',
  card_cardholder_mismatch: 'The card does not belong to the cardholder.',
  chg_erased:
    'The cardholder or card belonged to a group that was erased (POST /api/v2/chg/{chgId}/erase): nothing of the ' +
    'event is stored.',
  card_details_mismatch:
    "cardLast4 or network is not what the card holds; details.errors names the field and the card's value.",
  id_conflict: 'The id was already received with other content.',
  unknown_related_transaction: 'A refund names no settled purchase of this issuer.',
  related_transaction_mismatch: "A refund's card is in another cardholder group than the purchase it refunds.",
  currency_mismatch:
    'A refund or settlement is in another currency than the purchase or authorization it names (or an authorization ' +
    'in another currency than its settlement): amounts in different currencies are never compared; nothing is stored.',
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

export const lagSchema = named(
  'IngestionLag',
  {
    type: 'object',
    required: ['pendingEvents', 'oldestPendingAgeSeconds', 'waitingEvents', 'waitingEventsLimit'],
    properties: {
      pendingEvents: {
        type: 'integer',
        minimum: 0,
        description: "The issuer's events accepted and not yet processed: waitingEvents and those being processed.",
      },
      oldestPendingAgeSeconds: {
        type: 'integer',
        minimum: 0,
        description:
          'Whole seconds since the oldest pending event was accepted (or its authorization reversed); 0 when none.',
      },
      waitingEvents: {
        type: 'integer',
        minimum: 0,
        description: 'Of those, the events not yet handed to processing: what the backlog limit counts.',
      },
      waitingEventsLimit: {
        type: 'integer',
        minimum: 1,
        description: 'The backlog limit: with this many events waiting, ingestion answers 429 backlog_full.',
      },
    },
  },
  { pendingEvents: 1250, oldestPendingAgeSeconds: 42, waitingEvents: 1150, waitingEventsLimit: 100000 },
);
