// JSON schemas of the webhook routes (API.md, Webhooks), validated by ajv and published in
// /openapi.json unchanged.
import { idSchema, nullableTimestampSchema, timestampSchema } from '../schemas/common';
import { MAX_WEBHOOK_URL_LENGTH } from '../../core/webhooks/endpoint-url';
import { paginationQueryProperties } from '../pagination';

import { WEBHOOK_TYPES } from '../../core/webhooks/payloads';

export { WEBHOOK_TYPES };
export const WEBHOOK_STATUSES = ['pending', 'delivering', 'delivered', 'failed'] as const;
export type { WebhookType as WebhookTypeName } from '../../core/webhooks/payloads';

export const endpointBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_WEBHOOK_URL_LENGTH,
      description:
        'Absolute URL receiving POSTs; https (http allowed for sandbox issuers), no credentials, no spaces or control characters; its host must be public (no loopback, private, link-local... address) and its port not one of fetch\'s bad ports.',
    },
    enabledTypes: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: WEBHOOK_TYPES },
      description: 'Webhook types sent to this endpoint; omitted means every type.',
    },
  },
};

export const endpointSchema = {
  type: 'object',
  required: ['url', 'enabledTypes', 'previousSecretExpiresAt', 'createdAt', 'updatedAt'],
  properties: {
    url: { type: 'string' },
    enabledTypes: { type: 'array', items: { type: 'string', enum: WEBHOOK_TYPES } },
    signingSecret: { type: 'string', description: 'whsec_ secret; returned on creation and rotation only.' },
    previousSecretExpiresAt: { ...nullableTimestampSchema, description: 'Until then the previous secret also signs (rotation overlap).' },
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  },
};

export const rotatedSecretSchema = {
  type: 'object',
  required: ['signingSecret', 'previousSecretExpiresAt'],
  properties: { signingSecret: { type: 'string' }, previousSecretExpiresAt: timestampSchema },
};

export const webhookListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { type: 'string', enum: WEBHOOK_STATUSES },
    type: { type: 'string', enum: WEBHOOK_TYPES },
    ...paginationQueryProperties,
  },
};

export const webhookSchema = {
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
    data: { type: 'object', description: 'The envelope data: source ids (audit chain) and amounts.' },
  },
};

export const attemptSchema = {
  type: 'object',
  required: ['attemptNumber', 'startedAt', 'statusCode', 'latencyMs', 'outcome', 'error'],
  properties: {
    attemptNumber: { type: 'integer' },
    startedAt: timestampSchema,
    statusCode: { type: ['integer', 'null'] },
    latencyMs: { type: 'integer' },
    outcome: { type: 'string', enum: ['succeeded', 'failed'] },
    errorClass: {
      type: ['string', 'null'],
      description: 'http_status, timeout, connection_error, request_error, attempt_lost, not_configured, type_not_enabled or destination_refused (the URL names or resolves to an address webhooks may not reach; nothing was sent).',
    },
    error: { type: ['string', 'null'] },
  },
};

export const webhookDetailSchema = {
  ...webhookSchema,
  required: [...webhookSchema.required, 'attempts'],
  properties: { ...webhookSchema.properties, attempts: { type: 'array', items: attemptSchema } },
};

export const replayAcceptedSchema = {
  type: 'object',
  required: ['webhookId', 'firstAttemptNumber'],
  properties: {
    webhookId: idSchema('evt'),
    firstAttemptNumber: { type: 'integer', description: 'Number of the replay run’s first attempt.' },
    workflowId: { type: 'string', description: 'Operator API only: the Temporal workflow of the replay.' },
  },
};
