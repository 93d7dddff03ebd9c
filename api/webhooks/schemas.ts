// JSON schemas of the webhook routes (API.md, Webhooks), validated by ajv and published in
// /openapi.json unchanged.
import { idSchema, nullableTimestampSchema, timestampSchema } from '../schemas/common';
import { paginationQueryProperties } from '../pagination';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';
import type { Validated } from '../../core/validated';

export { WEBHOOK_TYPES };
export const WEBHOOK_STATUSES = ['pending', 'delivering', 'delivered', 'failed', 'skipped'] as const;
export const DELIVERY_STATUSES = WEBHOOK_STATUSES;
export type { WebhookType as WebhookTypeName } from '../../core/webhooks/payloads';

export const webhookListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: WEBHOOK_STATUSES },
    type: { type: 'string', enum: WEBHOOK_TYPES },
    ...paginationQueryProperties,
  },
} as const;

export type WebhookListQuery = Validated<typeof webhookListQuerySchema>;

const exampleWebhookData = {
  chgId: exampleId('chg'),
  authorizationId: null,
  transactionId: exampleId('txn'),
  externalId: 't-1',
  merchantId: exampleId('mp'),
  currency: 'usd',
  rewardEventIds: [exampleId('brevt'), exampleId('brevt', 2)],
  rewardGrantIds: [exampleId('rg')],
  earnedAmountMinor: 200,
  cashbackAmountMinor: 125,
  brandedAmountMinor: 75,
  spentAmountMinor: 0,
} as const;
const exampleWebhook = {
  webhookId: exampleId('evt'),
  type: 'qualified_settlement',
  status: 'delivered',
  attemptCount: 2,
  lastAttemptAt: EXAMPLE_TIME,
  nextAttemptAt: null,
  deliveredAt: EXAMPLE_TIME,
  createdAt: EXAMPLE_TIME,
  data: exampleWebhookData,
} as const;
const exampleAttempts = [
  {
    attemptNumber: 1,
    startedAt: EXAMPLE_TIME,
    statusCode: 503,
    latencyMs: 41,
    outcome: 'failed',
    errorClass: 'http_status',
    error: 'HTTP 503',
  },
  {
    attemptNumber: 2,
    startedAt: EXAMPLE_TIME,
    statusCode: 204,
    latencyMs: 38,
    outcome: 'succeeded',
    errorClass: null,
    error: null,
  },
];

const exampleEndpointAttempts = exampleAttempts.map((a) => ({ endpointId: exampleId('whe'), ...a }));

export const webhookSchema = named(
  'Webhook',
  {
    type: 'object',
    required: ['webhookId', 'type', 'status', 'attemptCount', 'createdAt', 'data'],
    properties: {
      webhookId: idSchema('evt'),
      type: { type: 'string', enum: WEBHOOK_TYPES },
      status: { type: 'string', enum: WEBHOOK_STATUSES },
      attemptCount: { type: 'integer' },
      lastAttemptAt: nullableTimestampSchema,
      nextAttemptAt: nullableTimestampSchema,
      deliveredAt: nullableTimestampSchema,
      createdAt: timestampSchema,
      test: { type: 'boolean', description: 'Present (true) on test events only.' },
      data: {
        type: 'object',
        additionalProperties: true,
        description: 'The envelope data: source ids (audit chain) and amounts.',
      },
    },
  },
  exampleWebhook,
);

export const attemptSchema = named(
  'WebhookAttempt',
  {
    type: 'object',
    required: ['endpointId', 'attemptNumber', 'startedAt', 'statusCode', 'latencyMs', 'outcome', 'error'],
    properties: {
      endpointId: {
        type: ['string', 'null'],
        description: 'The endpoint attempted; null for attempts made when the issuer had no endpoint.',
      },
      attemptNumber: { type: 'integer', description: 'Numbered per delivery (webhook and endpoint).' },
      startedAt: timestampSchema,
      statusCode: { type: ['integer', 'null'] },
      latencyMs: { type: 'integer' },
      outcome: { type: 'string', enum: ['succeeded', 'failed'] },
      errorClass: {
        type: ['string', 'null'],
        description:
          'http_status, timeout, connection_error, request_error, attempt_lost, not_configured, type_not_enabled or destination_refused (the URL names or resolves to an address webhooks may not reach; nothing was sent).',
      },
      error: { type: ['string', 'null'] },
    },
  },
  exampleEndpointAttempts[0],
);

const exampleDelivery = {
  endpointId: exampleId('whe'),
  status: 'delivered',
  attemptCount: 2,
  lastAttemptAt: EXAMPLE_TIME,
  nextAttemptAt: null,
  deliveredAt: EXAMPLE_TIME,
  attempts: exampleEndpointAttempts,
};

export const deliverySchema = named(
  'WebhookDelivery',
  {
    type: 'object',
    required: ['endpointId', 'status', 'attemptCount', 'lastAttemptAt', 'nextAttemptAt', 'deliveredAt', 'attempts'],
    properties: {
      endpointId: idSchema('whe'),
      status: {
        type: 'string',
        enum: DELIVERY_STATUSES,
        description: 'skipped: the endpoint was disabled or deleted before it was sent (recover sends it again).',
      },
      attemptCount: { type: 'integer' },
      lastAttemptAt: nullableTimestampSchema,
      nextAttemptAt: nullableTimestampSchema,
      deliveredAt: nullableTimestampSchema,
      attempts: { type: 'array', items: attemptSchema },
    },
  },
  exampleDelivery,
);

export const webhookDetailSchema = named(
  'WebhookDetail',
  {
    ...webhookSchema,
    required: [...webhookSchema.required, 'deliveries', 'attempts'],
    properties: {
      ...webhookSchema.properties,
      deliveries: {
        type: 'array',
        items: deliverySchema,
        description: 'One per endpoint the webhook went to, with its attempts; status above sums them up.',
      },
      attempts: { type: 'array', items: attemptSchema, description: 'Every attempt to every endpoint, oldest first.' },
    },
  },
  {
    ...exampleWebhook,
    deliveries: [exampleDelivery],
    attempts: exampleEndpointAttempts,
  },
);

export const replayBodySchema = named(
  'WebhookReplayInput',
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      endpointId: {
        ...idSchema('whe'),
        description:
          'Replay to this endpoint only (even one the webhook never went to). Without it: every enabled endpoint it went to.',
      },
    },
  },
  { endpointId: exampleId('whe') },
);
export type ReplayInput = Validated<typeof replayBodySchema>;

export const replayAcceptedSchema = named(
  'WebhookReplay',
  {
    type: 'object',
    required: ['webhookId', 'endpointId', 'firstAttemptNumber', 'deliveries'],
    properties: {
      webhookId: idSchema('evt'),
      endpointId: { ...idSchema('whe'), description: 'The first delivery replayed (deliveries lists every one).' },
      firstAttemptNumber: { type: 'integer', description: 'Number of that replay run’s first attempt.' },
      workflowId: { type: 'string', description: 'Operator API only: the Temporal workflow of the replay.' },
      deliveries: {
        type: 'array',
        items: {
          type: 'object',
          required: ['endpointId', 'firstAttemptNumber'],
          properties: {
            endpointId: idSchema('whe'),
            firstAttemptNumber: { type: 'integer' },
            workflowId: { type: 'string', description: 'Operator API only.' },
          },
        },
      },
    },
  },
  {
    webhookId: exampleId('evt'),
    endpointId: exampleId('whe'),
    firstAttemptNumber: 3,
    deliveries: [{ endpointId: exampleId('whe'), firstAttemptNumber: 3 }],
  },
);
