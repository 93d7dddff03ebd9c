// The eligibility answers (API.md, Eligibility): may this group earn, or spend branded balance, at a merchant.
import { idSchema, openEnum, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { EARN_REASONS } from '../../core/rules/eligibility';
import { SPEND_REASONS } from '../../core/rules/spend-eligibility';
import { mccSchema, minorSchema } from '../catalogue/schemas';

export const eligibilityQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    amountMinor: {
      ...minorSchema,
      description: 'Preview a transaction of this amount (enables min-spend, MCC and reward checks).',
    },
    mcc: { ...mccSchema, description: 'MCC of the previewed transaction; only used with amountMinor.' },
    at: { ...timestampSchema, description: 'Instant to evaluate at (default: now).' },
  },
} as const;

export const eligibilitySchema = named(
  'Eligibility',
  {
    type: 'object',
    required: ['merchantId', 'eligible', 'reasons', 'eligibleOfferIds', 'evaluatedAt'],
    properties: {
      merchantId: idSchema('mp'),
      eligible: { type: 'boolean' },
      reasons: {
        type: 'array',
        items: openEnum(EARN_REASONS, 'Why the group would not earn.'),
        description: 'Empty when eligible.',
      },
      eligibleOfferIds: { type: 'array', items: idSchema('ofr') },
      winningOfferId: {
        ...idSchema('ofr'),
        description: 'With amountMinor: the qualifying offer giving the most reward.',
      },
      estimatedRewardMinor: {
        ...minorSchema,
        description: 'With amountMinor: reward of the winning offer, caps applied.',
      },
      evaluatedAt: timestampSchema,
    },
  },
  {
    merchantId: exampleId('mp'),
    eligible: true,
    reasons: [],
    eligibleOfferIds: [exampleId('ofr')],
    winningOfferId: exampleId('ofr'),
    estimatedRewardMinor: 200,
    evaluatedAt: EXAMPLE_TIME,
  },
);

export const spendQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { amountMinor: { ...minorSchema, description: 'Check the merchant spend minimum against this amount.' } },
} as const;

export const spendEligibilitySchema = named(
  'SpendEligibility',
  {
    type: 'object',
    required: [
      'merchantId',
      'eligible',
      'availableBalanceMinor',
      'pendingBalanceMinor',
      'currency',
      'spendRestrictionReasons',
    ],
    properties: {
      merchantId: idSchema('mp'),
      eligible: { type: 'boolean' },
      availableBalanceMinor: minorSchema,
      pendingBalanceMinor: minorSchema,
      currency: { type: 'string', enum: ['usd'] },
      spendRestrictionReasons: {
        type: 'array',
        items: openEnum(SPEND_REASONS, 'Why branded balance would not be spent.'),
        description: 'Empty when eligible.',
      },
    },
  },
  {
    merchantId: exampleId('mp'),
    eligible: false,
    availableBalanceMinor: 0,
    pendingBalanceMinor: 75,
    currency: 'usd',
    spendRestrictionReasons: ['no_available_balance', 'merchant_availability_delay'],
  },
);
