// Schemas of the reward reconciliation routes (SPEC.md 2.2, API.md).
import { externalIdSchema, idSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const REWARD_STATUSES = ['matched', 'not_matched', 'pending', 'reversed', 'unknown'] as const;

// A $25.00 purchase at a merchant with 5% cashback and 3% branded balance.
const exampleDetail = {
  transactionId: exampleId('txn'),
  status: 'matched',
  merchantId: exampleId('mp'),
  earnedAmountMinor: 200,
  spentAmountMinor: 0,
  clawedBackAmountMinor: 0,
  currency: 'usd',
  rewardEventIds: [exampleId('brevt'), exampleId('brevt', 2)],
} as const;

export const rewardDetailSchema = named(
  'RewardDetail',
  {
    type: 'object',
    required: [
      'transactionId',
      'status',
      'earnedAmountMinor',
      'spentAmountMinor',
      'clawedBackAmountMinor',
      'rewardEventIds',
    ],
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
  },
  exampleDetail,
);

export const overviewsBodySchema = named(
  'RewardOverviewsRequest',
  {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      transactionIds: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: idSchema('txn') },
      externalIds: { type: 'array', minItems: 1, maxItems: 100, uniqueItems: true, items: externalIdSchema },
    },
  },
  { externalIds: ['t-1', 't-2'] },
);

export const overviewsSchema = named(
  'RewardOverviews',
  {
    type: 'object',
    required: ['data', 'notFound'],
    properties: {
      data: { type: 'array', items: rewardDetailSchema },
      notFound: { type: 'array', items: { type: 'string' } },
    },
  },
  { data: [exampleDetail], notFound: ['t-2'] },
);

export const matchTraceSchema = named(
  'MatchTrace',
  {
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
        additionalProperties: true,
        description:
          'merchantMatch {merchantId, rule, detail}; checks [{name, passed, detail}]; earn {eligible, reasons, offers: [{offerId, ' +
          'eligible, conditions: [{name, passed, detail}], reward}]}; winningOfferId (the offer applied first); stacking ' +
          '{policy, stackCapBps (under stack), offers [{offerId, appliedMinor, reason}], applied [{offerId, cashbackMinor, ' +
          'brandedMinor, cappedBy}]}; arithmetic (the rates of the offer applied first; ' +
          "for a tiered offer, tier: the one the whole purchase reached; cappedBy: transaction, chg, budget or stack); spend; budgets {offerId: {limitMinor, usedMinor, remainingMinor, periodKey, period}}: each budgeted offer's " +
          "budget for the purchase's period as it was read; budgetUses [{offerId, periodKey, amountMinor}]: what the reward of each " +
          'offer applied took from its budget (a refund gives its clawback back there; budgetUse: the first); outcome; ' +
          'rewardEventIds; claims [{claimId, progress, budgetUses, rewardEventIds}]: what approved claims counted the purchase ' +
          "towards (cumulative offers it was missing from) and the completions they posted as the purchase's own. " +
          'A refund: what it clawed back (offers: what was due of each offer), ' +
          'budgetReturnedMinor and funding {issuerShareReturnedMinor, commissionReturnedMinor}.',
      },
    },
  },
  {
    transactionId: exampleId('txn'),
    externalId: 't-1',
    status: 'matched',
    merchantId: exampleId('mp'),
    processedAt: EXAMPLE_TIME,
    failureReason: null,
    trace: {
      merchantMatch: {
        merchantId: exampleId('mp'),
        rule: 'sandbox_merchant_id',
        detail: 'merchantId names a catalogue merchant',
      },
      earn: {
        eligible: true,
        reasons: [],
        offers: [
          {
            offerId: exampleId('ofr'),
            eligible: true,
            conditions: [{ name: 'min_spend', passed: true, detail: '2500 >= 1000' }],
            reward: 200,
          },
        ],
      },
      winningOfferId: exampleId('ofr'),
      arithmetic: {
        amountMinor: 2500,
        spentMinor: 0,
        eligibleAmountMinor: 2500,
        cashbackRateBps: 500,
        brandedRateBps: 300,
        uncappedMinor: 200,
        cappedBy: null,
        cashbackMinor: 125,
        brandedMinor: 75,
      },
      outcome: 'matched',
      rewardEventIds: [exampleId('brevt'), exampleId('brevt', 2)],
    },
  },
);
