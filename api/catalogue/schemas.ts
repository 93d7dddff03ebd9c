// Request and response schemas of the catalogue (API.md: Merchants, offers, activation,
// eligibility; Operator API).
import { idSchema, nullableTimestampSchema, statusSchema, timestampSchema } from '../schemas/common';
import { EARN_REASONS } from '../../core/rules/eligibility';
import { SPEND_REASONS } from '../../core/rules/spend-eligibility';

const minorSchema = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Integer minor units (cents).' };
// Request schemas spell "or null" with anyOf: the strict ajv instance rejects union types.
const orNull = (schema: object, description?: string) => ({ anyOf: [schema, { type: 'null' }], ...(description ? { description } : {}) });
const bpsSchema = { type: 'integer', minimum: 0, maximum: 10_000, description: 'Basis points (1/100 of a percent).' };
const mccSchema = { type: 'string', pattern: '^[0-9]{4}$', description: 'ISO 18245 merchant category code.' };
const urlSchema = orNull({ type: 'string', format: 'uri', maxLength: 2048 });
const daysSchema = { type: 'integer', minimum: 0, maximum: 365 };

export const MERCHANT_CATEGORIES_EXAMPLE = 'dining';

const brandedBalanceInput = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { type: 'boolean' },
    spendMinimumMinor: minorSchema,
    availabilityDelayDays: { ...daysSchema, description: 'Merchant minimum availability delay of branded balance, in days.' },
    expiryDays: { type: 'integer', minimum: 1, maximum: 3650, description: 'Days after earning that a grant expires.' },
  },
};

const matchRulesInput = {
  type: 'object',
  additionalProperties: false,
  description: 'Production matching: acquirer merchant ids (exact) first, then descriptor patterns (optionally limited to these MCCs).',
  properties: {
    descriptorPatterns: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 2, maxLength: 100 } },
    acquirerMerchantIds: { type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 64 } },
    mccs: { type: 'array', maxItems: 50, items: mccSchema },
  },
};

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
};

export const merchantCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'category'],
  properties: { ...merchantFields, status: { ...statusSchema, default: 'active' } },
};

export const merchantPatchSchema = { type: 'object', additionalProperties: false, minProperties: 1, properties: merchantFields };

const offerFields = {
  title: { type: 'string', minLength: 1, maxLength: 200 },
  description: orNull({ type: 'string', maxLength: 2000 }),
  cashbackRateBps: bpsSchema,
  brandedRateBps: bpsSchema,
  minSpendMinor: minorSchema,
  maxRewardMinor: orNull(minorSchema, 'Cap per transaction; null means none.'),
  maxRewardPerChgMinor: orNull(minorSchema, 'Cap per group over the life of the offer; null means none.'),
  mccs: orNull({ type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: mccSchema }, 'Qualifying MCCs; null means any.'),
  startsAt: timestampSchema,
  endsAt: orNull(timestampSchema, 'Exclusive end; null means open-ended. Set it to now to end the offer.'),
};

export const offerCreateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'cashbackRateBps', 'brandedRateBps', 'startsAt'],
  properties: offerFields,
};

export const offerPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { ...offerFields, status: { ...statusSchema, description: 'Catalogue status; inactive ends the offer for good.' } },
};

const activationSummarySchema = {
  type: 'object',
  required: ['status', 'activatedAt', 'presentedOfferId'],
  properties: {
    status: { type: 'string', enum: ['active', 'inactive', 'not_activated'] },
    activatedAt: nullableTimestampSchema,
    presentedOfferId: { type: ['string', 'null'] },
  },
};

const brandedBalanceSchema = {
  type: 'object',
  required: ['enabled', 'spendMinimumMinor', 'availabilityDelayDays', 'expiryDays'],
  properties: { enabled: { type: 'boolean' }, spendMinimumMinor: minorSchema, availabilityDelayDays: { type: 'integer' }, expiryDays: { type: 'integer' } },
};

export const merchantSchema = {
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
};

export const adminMerchantSchema = {
  type: 'object',
  required: ['id', 'name', 'category', 'status', 'issuerIds', 'brandedBalance', 'matchRules', 'createdAt', 'updatedAt'],
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
};
delete (adminMerchantSchema.properties as Record<string, unknown>).activation;

export const offerSchema = {
  type: 'object',
  required: ['id', 'merchantId', 'title', 'description', 'cashbackRateBps', 'brandedRateBps', 'minSpendMinor', 'maxRewardMinor', 'maxRewardPerChgMinor', 'mccs', 'startsAt', 'endsAt', 'status'],
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
    status: { type: 'string', enum: ['scheduled', 'active', 'ended'], description: 'From the window and the catalogue status, at the time of the request.' },
  },
};

export const adminOfferSchema = {
  type: 'object',
  required: [...offerSchema.required, 'catalogueStatus', 'createdAt', 'updatedAt'],
  properties: { ...offerSchema.properties, catalogueStatus: statusSchema, createdAt: timestampSchema, updatedAt: timestampSchema },
};

export const activationSchema = {
  type: 'object',
  required: ['merchantId', 'chgId', 'status', 'activatedAt', 'presentedOfferId', 'deactivatedAt'],
  properties: {
    merchantId: idSchema('mp'),
    chgId: idSchema('chg'),
    status: { type: 'string', enum: ['active', 'inactive', 'not_activated'] },
    activatedAt: nullableTimestampSchema,
    presentedOfferId: { type: ['string', 'null'] },
    deactivatedAt: nullableTimestampSchema,
  },
};

export const activationInputSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { presentedOfferId: { ...idSchema('ofr'), description: 'The active offer of this merchant through which the cardholder activated.' } },
};

export const eligibilityQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    amountMinor: { ...minorSchema, description: 'Preview a transaction of this amount (enables min-spend, MCC and reward checks).' },
    mcc: { ...mccSchema, description: 'MCC of the previewed transaction; only used with amountMinor.' },
    at: { ...timestampSchema, description: 'Instant to evaluate at (default: now).' },
  },
};

export const eligibilitySchema = {
  type: 'object',
  required: ['merchantId', 'eligible', 'reasons', 'eligibleOfferIds', 'evaluatedAt'],
  properties: {
    merchantId: idSchema('mp'),
    eligible: { type: 'boolean' },
    reasons: { type: 'array', items: { type: 'string', enum: EARN_REASONS }, description: 'Empty when eligible. Clients must tolerate new values.' },
    eligibleOfferIds: { type: 'array', items: idSchema('ofr') },
    winningOfferId: { ...idSchema('ofr'), description: 'With amountMinor: the qualifying offer giving the most reward.' },
    estimatedRewardMinor: { ...minorSchema, description: 'With amountMinor: reward of the winning offer, caps applied.' },
    evaluatedAt: timestampSchema,
  },
};

export const spendQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { amountMinor: { ...minorSchema, description: 'Check the merchant spend minimum against this amount.' } },
};

export const spendEligibilitySchema = {
  type: 'object',
  required: ['merchantId', 'eligible', 'availableBalanceMinor', 'pendingBalanceMinor', 'currency', 'spendRestrictionReasons'],
  properties: {
    merchantId: idSchema('mp'),
    eligible: { type: 'boolean' },
    availableBalanceMinor: minorSchema,
    pendingBalanceMinor: minorSchema,
    currency: { type: 'string', enum: ['usd'] },
    spendRestrictionReasons: { type: 'array', items: { type: 'string', enum: SPEND_REASONS }, description: 'Clients must tolerate new values.' },
  },
};
