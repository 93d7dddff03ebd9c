// Request and response schemas of the catalogue (API.md: Merchants, offers; Operator API).
import { idSchema, nullableTimestampSchema, statusSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import type { Validated } from '../../core/validated';
import { MAX_CASHBACK_HOLD_DAYS } from '../../core/rules/cashback';

export const minorSchema = {
  type: 'integer',
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'Integer minor units (cents).',
} as const;
// Request schemas spell "or null" with anyOf: the strict ajv instance rejects union types.
const orNull = <const S extends object>(schema: S, description?: string) => ({
  anyOf: [schema, { type: 'null' }] as const,
  ...(description ? { description } : {}),
});
const bpsSchema = {
  type: 'integer',
  minimum: 0,
  maximum: 10_000,
  description: 'Basis points (1/100 of a percent).',
} as const;
export const mccSchema = {
  type: 'string',
  pattern: '^[0-9]{4}$',
  description: 'ISO 18245 merchant category code.',
} as const;
const urlSchema = orNull({ type: 'string', format: 'uri', maxLength: 2048 });
const daysSchema = { type: 'integer', minimum: 0, maximum: 365 } as const;

export const MERCHANT_CATEGORIES_EXAMPLE = 'dining';

const brandedBalanceInput = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    spendMinimumMinor: minorSchema,
    availabilityDelayDays: {
      ...daysSchema,
      description: 'Merchant minimum availability delay of branded balance, in days.',
    },
    expiryDays: { type: 'integer', minimum: 1, maximum: 3650, description: 'Days after earning that a grant expires.' },
  },
} as const;

const matchRulesInput = {
  type: 'object',
  additionalProperties: false,
  description:
    'How card events are matched to the merchant, in production and in sandbox (unless a sandbox event forces an mp_ id): ' +
    'acquirer merchant ids (exact) first, then descriptor patterns (optionally limited to these MCCs).',
  properties: {
    descriptorPatterns: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 2, maxLength: 100 } },
    acquirerMerchantIds: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 64 } },
    mccs: { type: 'array', maxItems: 50, items: mccSchema },
  },
} as const;

const merchantFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  category: { type: 'string', minLength: 1, maxLength: 64, example: MERCHANT_CATEGORIES_EXAMPLE },
  status: statusSchema,
  logoUrl: urlSchema,
  websiteUrl: urlSchema,
  issuerIds: orNull(
    { type: 'array', minItems: 1, maxItems: 1000, uniqueItems: true, items: idSchema('iss') },
    'Issuers that see this merchant; null (the default) means every issuer.',
  ),
  brandedBalance: brandedBalanceInput,
  matchRules: matchRulesInput,
} as const;

// The sandbox catalogue's Blue Bottle Coffee (README walk-through): 5% cashback from $10, 3% branded balance.
const exampleBrandedBalance = {
  enabled: true,
  spendMinimumMinor: 500,
  availabilityDelayDays: 3,
  expiryDays: 365,
} as const;
const exampleMatchRules = { descriptorPatterns: ['BLUE BOTTLE'], acquirerMerchantIds: [], mccs: ['5814'] } as const;
const exampleMerchantFields = {
  name: 'Blue Bottle Coffee',
  category: 'dining',
  status: 'active',
  logoUrl: null,
  websiteUrl: 'https://bluebottlecoffee.com',
  brandedBalance: exampleBrandedBalance,
} as const;
const exampleOfferFields = {
  title: '5% back, 3% in Blue Bottle balance',
  description: 'On purchases of $10 or more.',
  cashbackRateBps: 500,
  brandedRateBps: 300,
  minSpendMinor: 1000,
  maxRewardMinor: 2500,
  maxRewardPerChgMinor: null,
  mccs: null,
  startsAt: EXAMPLE_TIME,
  endsAt: null,
  returnPeriodDays: null,
} as const;
const exampleOffer = {
  id: exampleId('ofr'),
  merchantId: exampleId('mp'),
  ...exampleOfferFields,
  status: 'active',
} as const;

export const merchantCreateSchema = named(
  'MerchantInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'category'],
    properties: { ...merchantFields, status: { ...statusSchema, default: 'active' } },
  },
  { ...exampleMerchantFields, issuerIds: null, matchRules: exampleMatchRules },
);

export const merchantPatchSchema = named(
  'MerchantPatch',
  { type: 'object', additionalProperties: false, minProperties: 1, properties: merchantFields },
  { status: 'inactive' },
);

const returnPeriodDaysSchema = orNull(
  { type: 'integer', minimum: 0, maximum: MAX_CASHBACK_HOLD_DAYS },
  "Days the cashback of a purchase stays on hold (the merchant's return window), from the purchase's createdAt, " +
    "before it is payable; null means the issuer's cashbackHoldDays.",
);

const offerFields = {
  title: { type: 'string', minLength: 1, maxLength: 200 },
  description: orNull({ type: 'string', maxLength: 2000 }),
  cashbackRateBps: bpsSchema,
  brandedRateBps: bpsSchema,
  minSpendMinor: minorSchema,
  maxRewardMinor: orNull(minorSchema, 'Cap per transaction; null means none.'),
  maxRewardPerChgMinor: orNull(minorSchema, 'Cap per group over the life of the offer; null means none.'),
  mccs: orNull(
    { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: mccSchema },
    'Qualifying MCCs; null means any.',
  ),
  startsAt: timestampSchema,
  endsAt: orNull(timestampSchema, 'Exclusive end; null means open-ended. Set it to now to end the offer.'),
  returnPeriodDays: returnPeriodDaysSchema,
} as const;

export const offerCreateSchema = named(
  'OfferInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'cashbackRateBps', 'brandedRateBps', 'startsAt'],
    properties: offerFields,
  },
  exampleOfferFields,
);

export const offerPatchSchema = named(
  'OfferPatch',
  {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      ...offerFields,
      status: { ...statusSchema, description: 'Catalogue status; inactive ends the offer for good.' },
    },
  },
  { endsAt: EXAMPLE_LATER },
);

// What the operator API, the admin CLI and the catalogue import pass to api/catalogue/store.ts:
// a patch's type, every field optional, which a create's body also fits.
export type MerchantInput = Validated<typeof merchantPatchSchema>;
export type OfferInput = Validated<typeof offerPatchSchema>;

const activationSummarySchema = {
  type: 'object',
  required: ['status', 'activatedAt', 'presentedOfferId'],
  properties: {
    status: { type: 'string', enum: ['active', 'inactive', 'not_activated'] },
    activatedAt: nullableTimestampSchema,
    presentedOfferId: { type: ['string', 'null'] },
  },
} as const;

const brandedBalanceSchema = {
  type: 'object',
  required: ['enabled', 'spendMinimumMinor', 'availabilityDelayDays', 'expiryDays'],
  properties: {
    enabled: { type: 'boolean' },
    spendMinimumMinor: minorSchema,
    availabilityDelayDays: { type: 'integer' },
    expiryDays: { type: 'integer' },
  },
} as const;

export const merchantSchema = named(
  'Merchant',
  {
    type: 'object',
    required: ['id', 'name', 'category', 'status', 'logoUrl', 'websiteUrl', 'brandedBalance', 'activation'],
    properties: {
      id: idSchema('mp'),
      name: { type: 'string' },
      category: { type: 'string' },
      status: statusSchema,
      logoUrl: { type: ['string', 'null'] },
      websiteUrl: { type: ['string', 'null'] },
      brandedBalance: brandedBalanceSchema,
      activation: activationSummarySchema,
    },
  },
  {
    id: exampleId('mp'),
    ...exampleMerchantFields,
    activation: { status: 'active', activatedAt: EXAMPLE_TIME, presentedOfferId: exampleId('ofr') },
  },
);

export const adminMerchantSchema = named(
  'AdminMerchant',
  {
    type: 'object',
    required: [
      'id',
      'name',
      'category',
      'status',
      'issuerIds',
      'brandedBalance',
      'matchRules',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      ...merchantSchema.properties,
      issuerIds: { type: ['array', 'null'], items: { type: 'string' } },
      matchRules: {
        type: 'object',
        properties: {
          descriptorPatterns: { type: 'array', items: { type: 'string' } },
          acquirerMerchantIds: { type: 'array', items: { type: 'string' } },
          mccs: { type: 'array', items: { type: 'string' } },
        },
      },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('mp'),
    ...exampleMerchantFields,
    issuerIds: null,
    matchRules: exampleMatchRules,
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);
delete (adminMerchantSchema.properties as Record<string, unknown>).activation;

export const offerSchema = named(
  'Offer',
  {
    type: 'object',
    required: [
      'id',
      'merchantId',
      'title',
      'description',
      'cashbackRateBps',
      'brandedRateBps',
      'minSpendMinor',
      'maxRewardMinor',
      'maxRewardPerChgMinor',
      'mccs',
      'startsAt',
      'endsAt',
      'returnPeriodDays',
      'status',
    ],
    properties: {
      id: idSchema('ofr'),
      merchantId: idSchema('mp'),
      title: { type: 'string' },
      description: { type: ['string', 'null'] },
      cashbackRateBps: { type: 'integer' },
      brandedRateBps: { type: 'integer' },
      minSpendMinor: { type: 'integer' },
      maxRewardMinor: { type: ['integer', 'null'] },
      maxRewardPerChgMinor: { type: ['integer', 'null'] },
      mccs: { type: ['array', 'null'], items: { type: 'string' } },
      startsAt: timestampSchema,
      endsAt: nullableTimestampSchema,
      returnPeriodDays: returnPeriodDaysSchema,
      status: {
        type: 'string',
        enum: ['scheduled', 'active', 'ended'],
        description: 'From the window and the catalogue status, at the time of the request.',
      },
    },
  },
  exampleOffer,
);

export const adminOfferSchema = named(
  'AdminOffer',
  {
    type: 'object',
    required: [...offerSchema.required, 'catalogueStatus', 'createdAt', 'updatedAt'],
    properties: {
      ...offerSchema.properties,
      catalogueStatus: statusSchema,
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  { ...exampleOffer, catalogueStatus: 'active', createdAt: EXAMPLE_TIME, updatedAt: EXAMPLE_TIME },
);
