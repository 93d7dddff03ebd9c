// JSON schemas of the payout routes (API.md, "Cashback that is paid out"), validated by ajv and
// published in /openapi.json unchanged.
import { idSchema, sha256DigestSchema, timestampSchema } from '../schemas/common';
import { paginationQueryProperties } from '../pagination';
import { exampleOf, named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import type { Validated } from '../../core/validated';

/** Groups a run may list; a larger selection is a run over every group with a minimum. */
export const MAX_PAYOUT_CHG_IDS = 1000;
const MAX_AMOUNT_MINOR = 100_000_000;

const descriptionSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: 'For the issuer’s own records (e.g. the statement cycle it pays).',
} as const;

export const payoutRunBodySchema = named(
  'PayoutRunInput',
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      minimumMinor: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_AMOUNT_MINOR,
        default: 1,
        description: 'Pay only groups whose payable cashback is at least this much (all of it); 1 by default.',
      },
      chgIds: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_PAYOUT_CHG_IDS,
        uniqueItems: true,
        items: idSchema('chg'),
        description: 'Only these groups (each must be the issuer’s: 404 chg_not_found names those that are not).',
      },
      description: descriptionSchema,
    },
  },
  { minimumMinor: 500, description: 'November statement cycle' },
);

export const groupPayoutBodySchema = named(
  'GroupPayoutInput',
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      amountMinor: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_AMOUNT_MINOR,
        description: 'How much to pay; all of the group’s payable cashback when absent.',
      },
      description: descriptionSchema,
    },
  },
  { amountMinor: 1250 },
);

export const payoutSchema = named(
  'Payout',
  {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'kind',
      'status',
      'minimumMinor',
      'chgIds',
      'description',
      'asOf',
      'groupCount',
      'currency',
      'totalMinor',
      'createdAt',
      'completedAt',
    ],
    properties: {
      id: idSchema('po'),
      kind: {
        type: 'string',
        enum: ['run', 'group'],
        description: 'run: POST /api/v2/payouts; group: POST /api/v2/chg/{chgId}/payouts.',
      },
      status: {
        type: 'string',
        enum: ['processing', 'completed', 'failed'],
        description:
          'failed: a chunk failed past its retries; the groups it paid stay paid (items), a new run pays the rest.',
      },
      minimumMinor: { type: 'integer', minimum: 1 },
      chgIds: {
        type: ['array', 'null'],
        items: idSchema('chg'),
        description: 'The groups it was limited to, or null.',
      },
      description: { type: ['string', 'null'] },
      asOf: {
        ...timestampSchema,
        description: "The issuer's clock when it was created: cashback on hold at that instant is not paid.",
      },
      groupCount: { type: 'integer', minimum: 0, description: 'Groups paid so far.' },
      currency: { type: 'string', enum: ['usd'] },
      totalMinor: { type: 'integer', minimum: 0, description: 'Paid so far.' },
      failureReason: { type: 'string', description: 'Why a failed run stopped.' },
      createdAt: timestampSchema,
      completedAt: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  {
    id: exampleId('po'),
    kind: 'run',
    status: 'completed',
    minimumMinor: 500,
    chgIds: null,
    description: 'November statement cycle',
    asOf: EXAMPLE_TIME,
    groupCount: 1840,
    currency: 'usd',
    totalMinor: 412_650,
    createdAt: EXAMPLE_TIME,
    completedAt: EXAMPLE_LATER,
  },
);

export const payoutListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQueryProperties },
} as const;

export const payoutItemsQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: ['ndjson', 'csv'], default: 'ndjson' },
  },
} as const;

export const PayoutItemLine = named(
  'PayoutItemLine',
  {
    type: 'object',
    additionalProperties: false,
    required: ['record', 'chgId', 'externalId', 'amountMinor', 'currency', 'rewardEventId'],
    properties: {
      record: { type: 'string', const: 'payout_item' },
      chgId: idSchema('chg'),
      externalId: { type: 'string', description: "The group's id in the issuer's systems." },
      amountMinor: { type: 'integer', minimum: 1, description: 'To credit to the group.' },
      currency: { type: 'string', enum: ['usd'] },
      rewardEventId: idSchema('brevt', 'The cashback_paid_out reward event.'),
    },
  },
  {
    record: 'payout_item',
    chgId: exampleId('chg'),
    externalId: 'household-42',
    amountMinor: 1250,
    currency: 'usd',
    rewardEventId: exampleId('brevt'),
  },
);

export const PayoutItemsChecksum = named(
  'PayoutItemsChecksum',
  {
    type: 'object',
    additionalProperties: false,
    required: ['record', 'payoutId', 'status', 'count', 'totalMinor', 'digest'],
    properties: {
      record: { type: 'string', const: 'checksum' },
      payoutId: idSchema('po'),
      status: {
        type: 'string',
        enum: ['processing', 'completed', 'failed'],
        description: 'The payout when the file was read: only a completed payout’s file is final.',
      },
      count: { type: 'integer', minimum: 0, description: 'Lines before this one (groups).' },
      totalMinor: { type: 'integer', minimum: 0, description: 'The sum of their amountMinor.' },
      digest: sha256DigestSchema,
    },
  },
  {
    record: 'checksum',
    payoutId: exampleId('po'),
    status: 'completed',
    count: 1,
    totalMinor: 1250,
    digest: { algorithm: 'sha256', value: '5f0c7d0d7d6b3f0e8a1f0a2e6c3b1d9e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c' },
  },
);

export const PayoutItemsNdjson = named(
  'PayoutItemsNdjsonLine',
  {
    description: 'One line of the NDJSON items file: a group paid, or the checksum record that ends it.',
    oneOf: [PayoutItemLine, PayoutItemsChecksum],
  },
  exampleOf(PayoutItemLine),
);

export const PayoutItemsCsv = named(
  'PayoutItemsCsv',
  {
    type: 'string',
    description:
      'A header line `chgId,externalId,amountMinor,currency,rewardEventId`, one line per group paid, and a last line ' +
      '`#checksum payoutId=… status=… count=… totalMinor=… sha256=…` (the SHA-256 of every byte before it).',
  },
  'chgId,externalId,amountMinor,currency,rewardEventId\r\n' +
    `${exampleId('chg')},household-42,1250,usd,${exampleId('brevt')}\r\n` +
    `#checksum payoutId=${exampleId('po')} status=completed count=1 totalMinor=1250 sha256=5f0c7d0d7d6b3f0e8a1f0a2e6c3b1d9e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c\r\n`,
);

export type PayoutRunInput = Validated<typeof payoutRunBodySchema>;
export type GroupPayoutInput = Validated<typeof groupPayoutBodySchema>;
export type PayoutListQuery = Validated<typeof payoutListQuerySchema>;
export type PayoutItemsQuery = Validated<typeof payoutItemsQuerySchema>;
