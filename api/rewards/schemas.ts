// Schemas of the reward reconciliation routes (SPEC.md 2.2, API.md).
import { externalIdSchema, idSchema } from '../schemas/common';

export const REWARD_STATUSES = ['matched', 'not_matched', 'pending', 'reversed', 'unknown'] as const;

export const rewardDetailSchema = {
  type: 'object',
  required: ['transactionId', 'status', 'earnedAmountMinor', 'spentAmountMinor', 'clawedBackAmountMinor', 'rewardEventIds'],
  additionalProperties: false,
  properties: {
    transactionId: idSchema('txn'),
    status: { type: 'string', enum: REWARD_STATUSES },
    merchantId: { ...idSchema('mp'), description: 'Present only when a merchant was matched.' },
    earnedAmountMinor: { type: 'integer', minimum: 0 },
    spentAmountMinor: { type: 'integer', minimum: 0 },
    clawedBackAmountMinor: { type: 'integer', minimum: 0 },
    currency: { type: 'string', enum: ['usd'], description: 'Present when rewards are.' },
    rewardEventIds: { type: 'array', items: idSchema('brevt') },
  },
};

export const overviewsBodySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    transactionIds: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: idSchema('txn') },
    externalIds: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: externalIdSchema },
  },
};

export const overviewsSchema = {
  type: 'object',
  required: ['data', 'notFound'],
  properties: { data: { type: 'array', items: rewardDetailSchema }, notFound: { type: 'array', items: { type: 'string' } } },
};

export const matchTraceSchema = {
  type: 'object',
  required: ['transactionId', 'status', 'trace'],
  properties: {
    transactionId: idSchema('txn'),
    externalId: { type: 'string' },
    status: { type: 'string', enum: REWARD_STATUSES },
    merchantId: { type: ['string', 'null'] },
    processedAt: { type: ['string', 'null'], format: 'date-time' },
    failureReason: { type: ['string', 'null'] },
    trace: {
      type: ['object', 'null'],
      description:
        'merchantMatch {merchantId, rule, detail}; checks [{name, passed, detail}]; earn {eligible, reasons, offers: [{offerId, ' +
        'eligible, conditions: [{name, passed, detail}], reward}]}; winningOfferId; arithmetic; spend; outcome; rewardEventIds.',
    },
  },
};

