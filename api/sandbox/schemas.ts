// Schemas of the sandbox simulation routes (API.md "Sandbox issuers only").
// Each response schema is named (api/schemas/named.ts), with an example, so it is published as a
// component.
import { idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { MAX_AMOUNT_MINOR } from '../ingestion/schemas';
import type { Validated } from '../../core/validated';

const DAY_MS = 86_400_000;
/** One advance moves the clock at most this far (a year of days, or the same in hours). */
export const MAX_ADVANCE_DAYS = 366;
export const MAX_ADVANCE_HOURS = MAX_ADVANCE_DAYS * 24;
/** The issuer's clock never runs more than this far ahead (the database CHECK says the same). */
export const MAX_CLOCK_OFFSET_MS = 631_152_000_000; // 20 years of 365.25 days
export const MAX_ADVANCE_MS = MAX_ADVANCE_DAYS * DAY_MS;

const clockProperties = {
  now: { ...timestampSchema, description: "The issuer's simulated now: the server's time plus clockOffsetMs." },
  clockOffsetMs: {
    type: 'integer',
    minimum: 0,
    maximum: MAX_CLOCK_OFFSET_MS,
    description: 'How far the clock runs ahead of real time, in milliseconds. Only grows.',
  },
} as const;

export const sandboxClockSchema = named(
  'SandboxClock',
  {
    type: 'object',
    additionalProperties: false,
    required: ['now', 'clockOffsetMs'],
    properties: clockProperties,
  },
  { now: EXAMPLE_LATER, clockOffsetMs: 259_200_000 },
);

export const clockAdvanceBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    days: {
      type: 'integer',
      minimum: 0,
      maximum: MAX_ADVANCE_DAYS,
      description: 'Whole days to move the clock forward.',
    },
    hours: { type: 'integer', minimum: 0, maximum: MAX_ADVANCE_HOURS, description: 'Whole hours, added to days.' },
  },
  description: `days and hours together: more than 0 and at most ${MAX_ADVANCE_DAYS} days per call. The clock never goes back.`,
} as const;

export const sandboxClockAdvanceSchema = named(
  'SandboxClockAdvance',
  {
    type: 'object',
    additionalProperties: false,
    required: ['now', 'clockOffsetMs', 'advancedByMs', 'waitingAuthorizationsNotified', 'expiryWorkflowId'],
    properties: {
      ...clockProperties,
      advancedByMs: { type: 'integer', minimum: 1, maximum: MAX_ADVANCE_MS },
      waitingAuthorizationsNotified: {
        type: 'integer',
        minimum: 0,
        description:
          'Purchases whose previewed authorization waits for its settlement: each was told the new time, and lapses if its time-out has passed on it.',
      },
      expiryWorkflowId: {
        type: 'string',
        description:
          'The expireGrants run started for this issuer at its new now: grants past expiry move to breakage within seconds.',
      },
    },
  },
  {
    now: EXAMPLE_LATER,
    clockOffsetMs: 259_200_000,
    advancedByMs: 259_200_000,
    waitingAuthorizationsNotified: 1,
    expiryWorkflowId: `expire/${exampleId('iss')}/clock-259200000`,
  },
);

export const SIMULATED_OUTCOMES = ['authorized', 'declined', 'reversed', 'settled', 'refunded'] as const;
export type SimulatedOutcome = (typeof SIMULATED_OUTCOMES)[number];

export const simulateBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['cardId', 'merchantId', 'amount', 'outcome'],
  properties: {
    cardId: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description: "The card that pays: the issuer's card id (externalId) of an active card, or our card_ id.",
    },
    merchantId: idSchema('mp', 'The merchant the purchase is forced to match (sandbox matching).'),
    amount: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_AMOUNT_MINOR,
      description: 'Purchase amount in usd minor units.',
    },
    outcome: {
      type: 'string',
      enum: SIMULATED_OUTCOMES,
      description:
        'authorized: an approved authorization only (it previews, then waits for a settlement and lapses after SETTLEMENT_TIMEOUT on the ' +
        "issuer's clock); declined: a declined authorization; reversed: approved, then reversed; settled: approved, then settled; " +
        'refunded: approved, settled, then refunded (refundAmount, default the whole amount).',
    },
    refundAmount: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_AMOUNT_MINOR,
      description: 'refunded only: at most amount.',
    },
    mcc: {
      type: 'string',
      pattern: '^[0-9]{4}$',
      description: 'Merchant category code of the events; 5999 when left out.',
    },
  },
} as const;

export type SimulateBody = Validated<typeof simulateBodySchema>;

const simulatedEventSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['endpoint', 'id', 'state', 'eventId'],
  properties: {
    endpoint: {
      type: 'string',
      enum: ['/api/v1/incoming-auth', '/api/v1/incoming-txn'],
      description: 'Where the event was ingested, as if the issuer had sent it.',
    },
    id: { type: 'string', description: "The event's id (the issuer's id field)." },
    state: { type: 'string', enum: ['approved', 'declined', 'reversed', 'settled', 'refunded'] },
    eventId: idSchema(['auth', 'txn'], 'The id the service gave the stored event.'),
  },
} as const;

export const simulatedPurchaseSchema = named(
  'SandboxSimulatedPurchase',
  {
    type: 'object',
    additionalProperties: false,
    required: ['outcome', 'chgId', 'authorizationId', 'transactionId', 'refundTransactionId', 'createdAt', 'events'],
    properties: {
      outcome: { type: 'string', enum: SIMULATED_OUTCOMES },
      chgId: idSchema('chg'),
      authorizationId: { ...idSchema('auth'), description: 'The authorization (every outcome has one).' },
      transactionId: {
        type: ['string', 'null'],
        pattern: '^txn_',
        description: 'The settlement (settled, refunded); read its reward-detail.',
      },
      refundTransactionId: { type: ['string', 'null'], pattern: '^txn_', description: 'The refund (refunded).' },
      createdAt: { ...timestampSchema, description: "The events' createdAt: the issuer's simulated now." },
      events: {
        type: 'array',
        items: simulatedEventSchema,
        description: 'The events ingested, in order; processing follows asynchronously, as for any event.',
      },
    },
  },
  {
    outcome: 'settled',
    chgId: exampleId('chg'),
    authorizationId: exampleId('auth'),
    transactionId: exampleId('txn'),
    refundTransactionId: null,
    createdAt: EXAMPLE_TIME,
    events: [
      { endpoint: '/api/v1/incoming-auth', id: 'sandbox-1-auth', state: 'approved', eventId: exampleId('auth') },
      { endpoint: '/api/v1/incoming-txn', id: 'sandbox-1-settled', state: 'settled', eventId: exampleId('txn') },
    ],
  },
);
