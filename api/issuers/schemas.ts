// Schemas of the operator API (API.md, Operator API): issuers and their tokens.
import { idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import type { Validated } from '../../core/validated';
import { DEFAULT_APPROVAL_THRESHOLD_MINOR } from '../../core/rules/four-eyes';
import { DEFAULT_CASHBACK_HOLD_DAYS, MAX_CASHBACK_HOLD_DAYS } from '../../core/rules/cashback';
import {
  DEFAULT_WEBHOOK_RETENTION_DAYS,
  MAX_WEBHOOK_RETENTION_DAYS,
  MIN_WEBHOOK_RETENTION_DAYS,
} from '../../core/rules/webhook-retention';

const issuerNameSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;
const delaySchema = {
  type: 'integer',
  minimum: 0,
  maximum: 365,
  description: 'Issuer minimum availability delay of branded balance, in days.',
} as const;
const expiryNoticeDaysSchema = {
  type: 'array',
  maxItems: 5,
  uniqueItems: true,
  items: { type: 'integer', minimum: 1, maximum: 365 },
  description:
    'Lead times, in days before a branded grant expires, of its reward_expiring notices (one per grant and lead time); ' +
    '[] for none. Default [30, 7].',
} as const;

// Bounds as the database's CHECKs (migration 20261123050000_issuer_rate_limits).
const rateLimitChangeSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  minProperties: 1,
  description:
    'Overrides of the rate limits for every token of this issuer; a field left out keeps its value, null resets it to the ' +
    "deployment's default, and `rateLimit: null` resets both. Takes effect on the next request (every API process forgets " +
    'its cached copy of the issuer at once, or within 60 s at worst).',
  properties: {
    requestsPerSecond: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000 },
    eventsPerSecond: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 10_000_000,
      description: 'Ingestion: events per second.',
    },
  },
} as const;

// The override of WEBHOOK_ENDPOINT_DISABLE_AFTER; its bounds are checked by api/issuers/store.ts.
export const DISABLE_AFTER_BOUNDS = { min: '1h', max: '365d' } as const;
const disableAfterChangeSchema = {
  type: ['string', 'null'],
  pattern: '^(never|[0-9]{1,15}(ms|s|m|h|d))$',
  description:
    "How long every delivery attempt to one of this issuer's webhook endpoints may fail before the endpoint is disabled " +
    `(disabledReason failing): a duration, a whole number with a unit ms, s, m, h or d, from ${DISABLE_AFTER_BOUNDS.min} to ` +
    `${DISABLE_AFTER_BOUNDS.max} (e.g. 5d); never; or null for the deployment's WEBHOOK_ENDPOINT_DISABLE_AFTER.`,
} as const;

const cashbackHoldDaysSchema = {
  type: 'integer',
  minimum: 0,
  maximum: MAX_CASHBACK_HOLD_DAYS,
  description:
    "The return window: days a purchase's cashback stays on hold, from its createdAt, before it is payable (unless its " +
    `offer sets returnPeriodDays); ${DEFAULT_CASHBACK_HOLD_DAYS} by default, 0 allowed.`,
} as const;

const webhookRetentionDaysSchema = {
  type: 'integer',
  minimum: MIN_WEBHOOK_RETENTION_DAYS,
  maximum: MAX_WEBHOOK_RETENTION_DAYS,
  description:
    "Days the issuer's webhook records (body, deliveries, attempts) are kept from their createdAt, then deleted by an " +
    'hourly sweep; a webhook with a delivery still pending or retrying is kept until it ends. ' +
    `${DEFAULT_WEBHOOK_RETENTION_DAYS} by default.`,
} as const;

const approvalThresholdSchema = {
  type: 'integer',
  minimum: 0,
  maximum: 100_000_000_000,
  description:
    'A claim approval posting more than this (minor units) waits for a second operator (four eyes); ' +
    `${DEFAULT_APPROVAL_THRESHOLD_MINOR} by default, 0 holds every claim approval.`,
} as const;

export const issuerSchema = named(
  'Issuer',
  {
    type: 'object',
    required: ['id', 'name', 'environment', 'brandedAvailabilityDelayDays', 'createdAt'],
    properties: {
      id: idSchema('iss'),
      name: { type: 'string' },
      environment: { type: 'string', enum: ['sandbox', 'production'] },
      brandedAvailabilityDelayDays: { type: 'integer' },
      expiryNoticeDays: {
        type: 'array',
        items: { type: 'integer' },
        description: 'Lead times of the reward_expiring notices, in days before expiry, largest first.',
      },
      rateLimit: {
        type: 'object',
        required: ['requestsPerSecond', 'eventsPerSecond'],
        description: "The issuer's rate-limit overrides; null means the deployment's default.",
        properties: {
          requestsPerSecond: { type: ['integer', 'null'] },
          eventsPerSecond: { type: ['integer', 'null'] },
        },
      },
      webhookEndpointDisableAfter: {
        type: ['string', 'null'],
        description:
          "Override of WEBHOOK_ENDPOINT_DISABLE_AFTER for this issuer's endpoints: a duration (shortest spelling, e.g. 5d) or " +
          "never; null means the deployment's setting.",
      },
      adjustmentLimitMinor: {
        type: 'integer',
        description:
          'The largest single adjustment (credit or debit) its tokens may post; 400 adjustment_too_large above.',
      },
      cashbackHoldDays: cashbackHoldDaysSchema,
      webhookRetentionDays: webhookRetentionDaysSchema,
      approvalThresholdMinor: approvalThresholdSchema,
      ingestionBacklogLimit: {
        type: ['integer', 'null'],
        description:
          "Override of INGESTION_BACKLOG_LIMIT for this issuer: with this many of its events waiting to be processed, ingestion answers 429 backlog_full; null means the deployment's setting.",
      },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('iss'),
    name: 'Example Bank',
    environment: 'sandbox',
    brandedAvailabilityDelayDays: 0,
    expiryNoticeDays: [30, 7],
    rateLimit: { requestsPerSecond: null, eventsPerSecond: 5000 },
    webhookEndpointDisableAfter: null,
    adjustmentLimitMinor: 10000,
    cashbackHoldDays: 30,
    webhookRetentionDays: 30,
    approvalThresholdMinor: 50000,
    ingestionBacklogLimit: null,
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);

export const tokenSchema = named(
  'IssuerToken',
  {
    type: 'object',
    required: ['id', 'label', 'createdAt'],
    properties: {
      id: idSchema('tok'),
      token: { type: 'string', description: 'The secret. Returned once, at creation; only its hash is stored.' },
      label: { type: ['string', 'null'] },
      createdAt: timestampSchema,
      revokedAt: { type: ['string', 'null'] },
    },
  },
  {
    id: exampleId('tok'),
    token: `rwd_sk_${Buffer.alloc(32, 42).toString('base64url')}`,
    label: 'production app servers',
    createdAt: EXAMPLE_TIME,
    revokedAt: null,
  },
);

export const issuerInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'environment'],
  properties: {
    name: issuerNameSchema,
    environment: { type: 'string', enum: ['sandbox', 'production'] },
    brandedAvailabilityDelayDays: delaySchema,
    expiryNoticeDays: expiryNoticeDaysSchema,
  },
} as const;

export const issuerChangesSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: issuerNameSchema,
    brandedAvailabilityDelayDays: delaySchema,
    expiryNoticeDays: expiryNoticeDaysSchema,
    rateLimit: rateLimitChangeSchema,
    webhookEndpointDisableAfter: disableAfterChangeSchema,
    adjustmentLimitMinor: {
      type: 'integer',
      minimum: 1,
      maximum: 100_000_000,
      description: 'The largest single adjustment its tokens may post (minor units); 10000 by default.',
    },
    cashbackHoldDays: cashbackHoldDaysSchema,
    webhookRetentionDays: webhookRetentionDaysSchema,
    approvalThresholdMinor: approvalThresholdSchema,
    ingestionBacklogLimit: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 100_000_000,
      description:
        "Events of this issuer waiting to be processed past which ingestion answers 429 backlog_full (other issuers unaffected); null for the deployment's INGESTION_BACKLOG_LIMIT. Takes effect within a second.",
    },
  },
} as const;

// What the routes, the admin CLI and the dev stack's setup pass to api/issuers/store.ts.
export type IssuerInput = Validated<typeof issuerInputSchema>;
export type IssuerChanges = Validated<typeof issuerChangesSchema>;
/** An operator's change of an issuer's rate limits: null resets one (or, for the whole object, both) to the default. */
export type RateLimitChange = IssuerChanges['rateLimit'];
