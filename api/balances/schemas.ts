// Schemas of the group-level reconciliation routes (API.md, Rewards and reconciliation).
import { idSchema, timestampSchema } from '../schemas/common';
import { pageSchema, paginationQueryProperties } from '../pagination';
import { REWARD_EVENT_TYPES } from '../../core/ledger';
import { named } from '../schemas/named';
import { EXAMPLE_EXPIRY, EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import type { Validated } from '../../core/validated';
import { BRANDED_IDENTITIES, CASHBACK_IDENTITIES, identityText } from './identities';

const minor = { type: 'integer', minimum: 0 } as const;
const usd = { type: 'string', enum: ['usd'] } as const;

const adjusted = {
  type: 'integer',
  description:
    'Net of customer-service adjustments (credits minus debits; POST .../adjustments), funded by the issuer.',
} as const;

const cashbackSummarySchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'earnedMinor',
    'clawedBackMinor',
    'adjustedMinor',
    'paidOutMinor',
    'pendingMinor',
    'onHoldMinor',
    'payableMinor',
    'balanceMinor',
    'owedMinor',
  ],
  description: `${CASHBACK_IDENTITIES.map(identityText).join('; ')}.`,
  properties: {
    earnedMinor: minor,
    clawedBackMinor: {
      ...minor,
      description:
        'Includes spent or expired branded balance a refund took back from cashback, and what a refund reversed after payout (owed).',
    },
    adjustedMinor: adjusted,
    paidOutMinor: { ...minor, description: 'Paid out by the issuer (payout runs and single payouts).' },
    pendingMinor: {
      ...minor,
      description: 'Previewed on authorizations not yet settled; not in the ledger, not in balanceMinor.',
    },
    onHoldMinor: {
      ...minor,
      description:
        "Earned by purchases still in their return window (the offer's returnPeriodDays, else the issuer's cashbackHoldDays, " +
        "from the purchase's createdAt): never paid out; a refund inside the window takes it back from here.",
    },
    payableMinor: { ...minor, description: 'What a payout would pay now.' },
    balanceMinor: { ...minor, description: 'The chg_cashback ledger account.' },
    owedMinor: {
      ...minor,
      description:
        "What a refund reversed after it was paid out (the chg_cashback_owed account): the group's next cashback repays it first; " +
        'an adjustment with reasonCode write_off forgives it.',
    },
  },
} as const;

const brandedSummarySchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'earnedMinor',
    'adjustedMinor',
    'availableMinor',
    'notYetAvailableMinor',
    'spentMinor',
    'expiredMinor',
    'clawedBackMinor',
  ],
  description: `${BRANDED_IDENTITIES.map(identityText).join('; ')}.`,
  properties: {
    earnedMinor: minor,
    adjustedMinor: adjusted,
    availableMinor: minor,
    notYetAvailableMinor: minor,
    spentMinor: minor,
    expiredMinor: {
      ...minor,
      description: 'Moved to breakage, plus value past its expiry the hourly expiry job has not moved yet.',
    },
    clawedBackMinor: minor,
  },
} as const;

export const summarySchema = named(
  'RewardSummary',
  {
    type: 'object',
    additionalProperties: false,
    required: ['chgId', 'currency', 'cashback', 'brandedBalance'],
    properties: {
      chgId: idSchema('chg'),
      currency: usd,
      cashback: cashbackSummarySchema,
      brandedBalance: brandedSummarySchema,
    },
  },
  {
    chgId: exampleId('chg'),
    currency: 'usd',
    cashback: {
      earnedMinor: 1250,
      clawedBackMinor: 125,
      adjustedMinor: 500,
      paidOutMinor: 1000,
      pendingMinor: 300,
      onHoldMinor: 500,
      payableMinor: 125,
      balanceMinor: 625,
      owedMinor: 0,
    },
    brandedBalance: {
      earnedMinor: 750,
      adjustedMinor: 0,
      availableMinor: 450,
      notYetAvailableMinor: 75,
      spentMinor: 200,
      expiredMinor: 25,
      clawedBackMinor: 0,
    },
  },
);

export const activityQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    type: { type: 'string', enum: REWARD_EVENT_TYPES, description: 'Only rows of this type.' },
  },
} as const;

export type ActivityQuery = Validated<typeof activityQuerySchema>;

export const activityRowSchema = named(
  'RewardActivity',
  {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'type', 'amountMinor', 'currency', 'occurredAt', 'description'],
    properties: {
      id: idSchema('brevt'),
      type: { type: 'string', enum: REWARD_EVENT_TYPES },
      amountMinor: {
        type: 'integer',
        not: { const: 0 },
        description:
          'Minor units; positive, except cashback_adjusted and branded_adjusted: signed (a customer-service debit is negative), ' +
          'and cashback_paid_out and cashback_owed_repaid: always negative (cashback leaving the balance).',
      },
      currency: usd,
      merchantId: idSchema('mp'),
      merchantName: { type: 'string' },
      transactionId: idSchema('txn'),
      rewardGrantId: idSchema('rg'),
      occurredAt: timestampSchema,
      description: { type: 'string' },
    },
  },
  {
    id: exampleId('brevt'),
    type: 'cashback_earned',
    amountMinor: 125,
    currency: 'usd',
    merchantId: exampleId('mp'),
    merchantName: 'Blue Bottle Coffee',
    transactionId: exampleId('txn'),
    occurredAt: EXAMPLE_TIME,
    description: 'Cashback earned at Blue Bottle Coffee',
  },
);

export const activityPageSchema = pageSchema(activityRowSchema);

export const expiringQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { withinDays: { type: 'integer', minimum: 1, maximum: 365, default: 30 } },
} as const;

export const expiringSchema = named(
  'ExpiringRewards',
  {
    type: 'object',
    additionalProperties: false,
    required: ['data'],
    properties: {
      data: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['rewardGrantId', 'merchantId', 'remainingMinor', 'expiresAt'],
          properties: {
            rewardGrantId: idSchema('rg'),
            merchantId: idSchema('mp'),
            remainingMinor: { type: 'integer', minimum: 1 },
            expiresAt: timestampSchema,
          },
        },
      },
    },
  },
  {
    data: [
      { rewardGrantId: exampleId('rg'), merchantId: exampleId('mp'), remainingMinor: 75, expiresAt: EXAMPLE_EXPIRY },
    ],
  },
);

export const merchantBalanceSchema = named(
  'MerchantBalance',
  {
    type: 'object',
    additionalProperties: false,
    required: [
      'merchantId',
      'currency',
      'availableMinor',
      'notYetAvailableMinor',
      'expiringWithin30DaysMinor',
      'grants',
    ],
    properties: {
      merchantId: idSchema('mp'),
      currency: usd,
      availableMinor: minor,
      notYetAvailableMinor: minor,
      expiringWithin30DaysMinor: {
        ...minor,
        description: 'Of available and not-yet-available value, what expires within 30 days.',
      },
      grants: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['rewardGrantId', 'remainingMinor', 'availableAt', 'expiresAt'],
          properties: {
            rewardGrantId: idSchema('rg'),
            remainingMinor: { type: 'integer', minimum: 1 },
            availableAt: timestampSchema,
            expiresAt: timestampSchema,
          },
        },
      },
    },
  },
  {
    merchantId: exampleId('mp'),
    currency: 'usd',
    availableMinor: 75,
    notYetAvailableMinor: 0,
    expiringWithin30DaysMinor: 0,
    grants: [
      { rewardGrantId: exampleId('rg'), remainingMinor: 75, availableAt: EXAMPLE_LATER, expiresAt: EXAMPLE_EXPIRY },
    ],
  },
);
