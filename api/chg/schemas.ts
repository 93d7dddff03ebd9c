// Request and response schemas of the cardholder group routes (API.md, Cardholder groups).
import { SEGMENT_PATTERN_SOURCE } from '../../core/rules/audience';
import {
  externalIdSchema,
  idSchema,
  nullableTimestampSchema,
  statusSchema,
  timestampSchema,
  errorObjectSchema,
} from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { CARD_NETWORKS } from '../../core/domain/events';
import type { Validated } from '../../core/validated';

export { CARD_NETWORKS };

export const MAX_CARDHOLDERS_PER_GROUP = 100;
export const MAX_CARDS_PER_CARDHOLDER = 20;
export const MAX_BULK_ITEMS = 500;
export const MAX_SETTINGS_BYTES = 16 * 1024;

const cardInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'last4', 'network'],
  properties: {
    externalId: externalIdSchema,
    last4: { type: 'string', pattern: '^[0-9]{4}$', description: 'Last four digits of the card number.' },
    bin: {
      type: 'string',
      pattern: '^([0-9]{6}|[0-9]{8})$',
      description:
        'The first 6 or 8 digits of the card number (its BIN), optional: with last4, all of the number the service ' +
        'keeps. Leaving it out of a later write clears it, as for any field of the desired state.',
    },
    network: { type: 'string', enum: CARD_NETWORKS },
    status: { ...statusSchema, default: 'active' },
  },
} as const;

const cardholderInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['externalId', 'cards'],
  properties: {
    externalId: externalIdSchema,
    status: { ...statusSchema, default: 'active' },
    cards: { type: 'array', minItems: 1, maxItems: MAX_CARDS_PER_CARDHOLDER, items: cardInputSchema },
  },
} as const;

export const settingsSchema = {
  type: 'object',
  description:
    'Product, localization and presentation settings. Unknown keys are kept as given (at most 16 KiB in all).',
  maxProperties: 50,
  additionalProperties: true,
  properties: {
    locale: {
      type: 'string',
      minLength: 2,
      maxLength: 35,
      pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
      example: 'en-US',
    },
    timezone: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone name.',
      example: 'America/New_York',
    },
    displayName: { type: 'string', minLength: 1, maxLength: 200 },
    metadata: { type: 'object', maxProperties: 50, additionalProperties: true },
  },
} as const;

/** A group's segments: the whole set, replaced by each upsert (sync semantics, as cardholders). */
export const MAX_SEGMENTS_PER_GROUP = 20;
const segmentsSchema = {
  type: 'array',
  maxItems: MAX_SEGMENTS_PER_GROUP,
  uniqueItems: true,
  items: { type: 'string', pattern: SEGMENT_PATTERN_SOURCE },
  description:
    "The issuer's labels for the group (premium, student, ...), which offer audiences name: the whole set, replacing " +
    'the stored one on every upsert; omitted means none.',
  example: ['premium'],
} as const;

// The body's types, derived from its schemas (core/validated.ts): defaults filled in.
export type GroupInput = Validated<typeof groupInputSchema>;
export type CardholderInput = GroupInput['cardholders'][number];
export type CardInput = CardholderInput['cards'][number];
export type GroupSettings = GroupInput['settings'];

// API.md's example group, as an issuer sends it and as it is stored.
const exampleSettings = {
  locale: 'en-US',
  timezone: 'America/New_York',
  displayName: 'The Smiths',
  metadata: { tier: 'gold' },
} as const;
const exampleGroupInput = {
  externalId: 'household-42',
  status: 'active',
  settings: exampleSettings,
  segments: ['premium'],
  cardholders: [
    {
      externalId: 'c-1001',
      status: 'active',
      cards: [{ externalId: 'k-9001', last4: '4242', network: 'visa', status: 'active' }],
    },
  ],
} as const;
const exampleCard = {
  id: exampleId('card'),
  externalId: 'k-9001',
  last4: '4242',
  bin: '424242',
  network: 'visa',
  status: 'active',
  deactivatedAt: null,
} as const;
const exampleGroup = {
  id: exampleId('chg'),
  externalId: 'household-42',
  status: 'active',
  settings: exampleSettings,
  segments: ['premium'],
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_LATER,
  deactivatedAt: null,
  erasedAt: null,
  cardholders: [
    { id: exampleId('ch'), externalId: 'c-1001', status: 'active', deactivatedAt: null, cards: [exampleCard] },
  ],
} as const;

export const groupInputSchema = named(
  'GroupInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['externalId', 'cardholders'],
    description: 'The desired state of one group. Cardholders and cards missing from the body are soft-deactivated.',
    properties: {
      externalId: externalIdSchema,
      status: { ...statusSchema, default: 'active' },
      settings: { ...settingsSchema, default: {} },
      segments: { ...segmentsSchema, default: [] },
      cardholders: { type: 'array', minItems: 1, maxItems: MAX_CARDHOLDERS_PER_GROUP, items: cardholderInputSchema },
    },
  },
  exampleGroupInput,
);

const exampleBulkInput = {
  items: [
    exampleGroupInput,
    {
      externalId: 'household-43',
      cardholders: [{ externalId: 'c-1002', cards: [{ externalId: 'k-9002', last4: '1881', network: 'mastercard' }] }],
    },
  ],
} as const;

const bulkItemsDescription =
  'Groups to upsert (1 to 500), each a GroupInput validated and stored on its own: an item that breaks the schema, ' +
  'or fails for another reason, fails alone and its result says why.';

/** The bulk body as published: every item a GroupInput. The handler checks each item against it. */
export const bulkInputSchema = named(
  'BulkUpsertInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['items'],
    properties: {
      items: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_BULK_ITEMS,
        description: bulkItemsDescription,
        items: groupInputSchema,
      },
    },
  },
  exampleBulkInput,
);

/** What is checked before the handler: the batch, not its items, so that one bad item fails alone. */
export const bulkEnvelopeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: { type: 'array', minItems: 1, maxItems: MAX_BULK_ITEMS, items: { type: 'object' } },
  },
} as const;
export type BulkEnvelope = Validated<typeof bulkEnvelopeSchema>;

const cardSchema = named('Card', {
  type: 'object',
  required: ['id', 'externalId', 'last4', 'bin', 'network', 'status', 'deactivatedAt'],
  properties: {
    id: idSchema('card'),
    externalId: { type: 'string' },
    last4: { type: 'string' },
    bin: { type: ['string', 'null'], description: 'The first 6 or 8 digits, when given.' },
    network: { type: 'string', enum: CARD_NETWORKS },
    status: statusSchema,
    deactivatedAt: nullableTimestampSchema,
  },
});

const cardholderSchema = named('Cardholder', {
  type: 'object',
  required: ['id', 'externalId', 'status', 'deactivatedAt', 'cards'],
  properties: {
    id: idSchema('ch'),
    externalId: { type: 'string' },
    status: statusSchema,
    deactivatedAt: nullableTimestampSchema,
    cards: { type: 'array', items: cardSchema },
  },
});

export const groupSchema = named(
  'Group',
  {
    type: 'object',
    required: [
      'id',
      'externalId',
      'status',
      'settings',
      'segments',
      'createdAt',
      'updatedAt',
      'deactivatedAt',
      'erasedAt',
      'cardholders',
    ],
    properties: {
      id: idSchema('chg'),
      externalId: { type: 'string' },
      status: statusSchema,
      // Open (additionalProperties: true) so that generated clients type the known keys and keep the others.
      settings: {
        type: 'object',
        additionalProperties: true,
        properties: settingsSchema.properties,
        description: 'As stored: the known keys and any others sent.',
      },
      segments: { ...segmentsSchema, description: "The issuer's labels for the group, as last synced." },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
      deactivatedAt: nullableTimestampSchema,
      erasedAt: {
        ...nullableTimestampSchema,
        description:
          "When the group was erased (POST .../erase): its, its cardholders' and cards' external ids read `erased <id>`, " +
          'last4 `0000`, settings and segments empty.',
      },
      cardholders: { type: 'array', items: cardholderSchema },
    },
  },
  exampleGroup,
);

export const bulkResultSchema = named(
  'BulkUpsertResult',
  {
    type: 'object',
    required: ['results'],
    properties: {
      results: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'status'],
          properties: {
            index: { type: 'integer' },
            status: { type: 'string', enum: ['created', 'updated', 'failed'] },
            id: idSchema('chg'),
            error: errorObjectSchema,
          },
        },
      },
    },
  },
  {
    results: [
      { index: 0, status: 'updated', id: exampleId('chg') },
      { index: 1, status: 'created', id: exampleId('chg', 2) },
    ],
  },
);

export const erasureSchema = named(
  'Erasure',
  {
    type: 'object',
    additionalProperties: false,
    required: ['chgId', 'status', 'erasedAt', 'tokenId', 'requestId', 'replaced'],
    properties: {
      chgId: idSchema('chg'),
      status: { type: 'string', enum: ['erased'] },
      erasedAt: { ...timestampSchema, description: 'When the erasure committed; the same on every later call.' },
      tokenId: { type: 'string', description: 'The id of the API token that asked for it.' },
      requestId: { type: ['string', 'null'], description: 'The X-Request-Id of the call that erased.' },
      replaced: {
        type: 'object',
        additionalProperties: false,
        required: ['cardholders', 'cards', 'events', 'claims', 'adjustments'],
        description: 'How many rows of each kind had personal fields replaced by tombstones.',
        properties: {
          cardholders: { type: 'integer', minimum: 0 },
          cards: { type: 'integer', minimum: 0 },
          events: {
            type: 'integer',
            minimum: 0,
            description: "Stored events whose payloads held the issuer's card ids.",
          },
          claims: { type: 'integer', minimum: 0, description: 'Claims whose notes were cleared.' },
          adjustments: { type: 'integer', minimum: 0, description: 'Adjustments whose notes were cleared.' },
        },
      },
    },
  },
  {
    chgId: exampleId('chg'),
    status: 'erased',
    erasedAt: EXAMPLE_LATER,
    tokenId: exampleId('tok'),
    requestId: 'req-7f3a',
    replaced: { cardholders: 2, cards: 3, events: 41, claims: 1, adjustments: 0 },
  },
);
