// JSON schemas of the webhook endpoint routes (API.md, Webhooks; "Webhook endpoints (several per
// issuer)"): the singular endpoint and the plural ones, validated by ajv and published in
// /openapi.json unchanged.
import { idSchema, nullableTimestampSchema, timestampSchema } from '../schemas/common';
import { MAX_WEBHOOK_URL_LENGTH } from '../../core/webhooks/endpoint-url';
import { paginationQueryProperties } from '../pagination';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';
import type { Validated } from '../../core/validated';

/** At most this many endpoints per issuer (409 endpoint_limit_reached beyond). */
export const MAX_ENDPOINTS_PER_ISSUER = 10;
export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export const DISABLED_REASONS = ['failing', 'manual'] as const;
export const MAX_DESCRIPTION_LENGTH = 500;

const endpointUrlText = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description:
    'Absolute URI (RFC 3986: a non-ASCII host name in its punycode form, other characters percent-encoded) receiving ' +
    "POSTs; https (http allowed for sandbox issuers), no credentials; its host must be public (no loopback, private, link-local... address) and its port not one of fetch's bad ports.",
} as const;

const enabledTypesSchema = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: WEBHOOK_TYPES },
  description: 'Webhook types sent to this endpoint; omitted means every type.',
} as const;

const descriptionSchema = {
  type: 'string',
  maxLength: MAX_DESCRIPTION_LENGTH,
  description: "The issuer's own note on what the endpoint is for; empty when not given.",
} as const;

const rateLimitSchema = {
  type: ['integer', 'null'],
  minimum: 1,
  maximum: 1000,
  description:
    'First delivery attempts per second sent to this endpoint at most; null (the default): bounded by concurrency only.',
} as const;

/**
 * The body as published: `url` with `format: uri`. The route checks the URL's syntax itself
 * (core/webhooks/endpoint-url.ts), to answer every URL problem with the one reasonCode
 * invalid_webhook_url; ajv checks the rest (endpointEnvelopeSchema).
 */
export const endpointBodySchema = named(
  'WebhookEndpointInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: { url: { ...endpointUrlText, format: 'uri' }, enabledTypes: enabledTypesSchema },
  },
  { url: 'https://rewards-hooks.example-issuer.com/webhooks', enabledTypes: ['qualified_settlement'] },
);

export const endpointEnvelopeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: { url: endpointUrlText, enabledTypes: enabledTypesSchema },
} as const;

/**
 * POST /api/v2/webhook-endpoints. `url` carries no `format`: the route checks it as the
 * singular PUT does, so every URL problem is answered with invalid_webhook_url.
 */
export const endpointCreateSchema = named(
  'WebhookEndpointCreate',
  {
    type: 'object',
    additionalProperties: false,
    required: ['url'],
    properties: {
      url: endpointUrlText,
      enabledTypes: enabledTypesSchema,
      description: descriptionSchema,
      rateLimitPerSecond: rateLimitSchema,
    },
  },
  {
    url: 'https://rewards-hooks.example-issuer.com/webhooks',
    enabledTypes: ['qualified_settlement', 'reward_available'],
    description: 'Cardholder notifications',
  },
);

export const endpointChangesSchema = named(
  'WebhookEndpointChanges',
  {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    description: 'Fields left out keep their value.',
    properties: {
      url: endpointUrlText,
      enabledTypes: enabledTypesSchema,
      description: descriptionSchema,
      status: {
        type: 'string',
        enum: ENDPOINT_STATUSES,
        description:
          'disabled: nothing is sent to it (its deliveries end skipped; recover sends them later), disabledReason manual. ' +
          'enabled: clears disabledReason and starts its health afresh.',
      },
      rateLimitPerSecond: rateLimitSchema,
    },
  },
  { status: 'disabled' },
);

// Not a real secret: 32 bytes of 0x2a, base64.
const EXAMPLE_SECRET = `whsec_${Buffer.alloc(32, 42).toString('base64')}`;

const healthSchema = {
  type: 'object',
  required: ['consecutiveFailures', 'failingSince', 'lastSuccessAt', 'lastFailureAt'],
  description: 'Updated with every delivery attempt.',
  properties: {
    consecutiveFailures: { type: 'integer', description: 'Failed attempts since the last success.' },
    failingSince: { ...nullableTimestampSchema, description: 'First failure of the current run of failures.' },
    lastSuccessAt: nullableTimestampSchema,
    lastFailureAt: nullableTimestampSchema,
  },
} as const;

export const endpointSchema = named(
  'WebhookEndpoint',
  {
    type: 'object',
    required: [
      'id',
      'url',
      'enabledTypes',
      'description',
      'status',
      'disabledReason',
      'rateLimitPerSecond',
      'health',
      'previousSecretExpiresAt',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      id: idSchema('whe'),
      url: { type: 'string' },
      enabledTypes: { type: 'array', items: { type: 'string', enum: WEBHOOK_TYPES } },
      description: { type: 'string' },
      status: { type: 'string', enum: ENDPOINT_STATUSES },
      disabledReason: {
        type: ['string', 'null'],
        enum: [...DISABLED_REASONS, null],
        description:
          'failing: disabled by the service after failing too long; manual: by the issuer; null when enabled.',
      },
      rateLimitPerSecond: { type: ['integer', 'null'] },
      health: healthSchema,
      signingSecret: { type: 'string', description: 'whsec_ secret; returned on creation only.' },
      previousSecretExpiresAt: {
        ...nullableTimestampSchema,
        description: 'Until then the previous secret also signs (rotation overlap).',
      },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('whe'),
    url: 'https://rewards-hooks.example-issuer.com/webhooks',
    enabledTypes: ['qualified_settlement'],
    description: '',
    status: 'enabled',
    disabledReason: null,
    rateLimitPerSecond: null,
    health: { consecutiveFailures: 0, failingSince: null, lastSuccessAt: EXAMPLE_TIME, lastFailureAt: null },
    signingSecret: EXAMPLE_SECRET,
    previousSecretExpiresAt: null,
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);

export const rotatedSecretSchema = named(
  'RotatedSigningSecret',
  {
    type: 'object',
    required: ['signingSecret', 'previousSecretExpiresAt'],
    properties: { signingSecret: { type: 'string' }, previousSecretExpiresAt: timestampSchema },
  },
  { signingSecret: EXAMPLE_SECRET, previousSecretExpiresAt: EXAMPLE_LATER },
);

export const endpointListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQueryProperties },
} as const;

export const testEventSchema = named(
  'WebhookEndpointTestInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['type'],
    properties: {
      type: {
        type: 'string',
        enum: WEBHOOK_TYPES,
        description:
          'The type whose published example (the webhooks section of /openapi.json) is sent; any type, enabled or not.',
      },
    },
  },
  { type: 'qualified_settlement' },
);

export const testEventAcceptedSchema = named(
  'WebhookEndpointTestEvent',
  {
    type: 'object',
    required: ['webhookId'],
    properties: {
      webhookId: idSchema('evt', 'The test webhook, recorded like any other (GET /api/v2/webhooks/{webhookId}).'),
    },
  },
  { webhookId: exampleId('evt') },
);

export const recoverSchema = named(
  'WebhookEndpointRecoverInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['since'],
    properties: {
      since: { ...timestampSchema, description: 'Webhooks created at or after this instant; not in the future.' },
      until: { ...timestampSchema, description: 'Webhooks created before this instant; after since. Default: now.' },
    },
  },
  { since: EXAMPLE_TIME, until: EXAMPLE_LATER },
);

export const recoverAcceptedSchema = named(
  'WebhookEndpointRecovery',
  {
    type: 'object',
    required: ['count'],
    properties: {
      count: { type: 'integer', description: 'Deliveries sent again (failed or skipped ones in the window).' },
    },
  },
  { count: 3 },
);

export type EndpointInput = Validated<typeof endpointEnvelopeSchema>;
export type EndpointCreate = Validated<typeof endpointCreateSchema>;
export type EndpointChanges = Validated<typeof endpointChangesSchema>;
export type EndpointListQuery = Validated<typeof endpointListQuerySchema>;
export type RecoverInput = Validated<typeof recoverSchema>;
