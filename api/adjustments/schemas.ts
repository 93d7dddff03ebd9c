// JSON schemas of the adjustment routes (API.md, Adjustments (customer service)), validated by
// ajv and published in /openapi.json unchanged.
import { idSchema, timestampSchema } from '../schemas/common';
import { paginationQueryProperties } from '../pagination';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { ADJUSTMENT_REASON_CODES, BALANCE_TYPES, reasonCodeViolation } from '../../core/rules/adjustments';
import type { Validated } from '../../core/validated';

export const MAX_NOTE_LENGTH = 500;
/** The largest amount the schema lets through; the issuer's own limit is usually far lower. */
const MAX_AMOUNT_MINOR = 100_000_000;

const signedAmount = {
  type: 'integer',
  minimum: -MAX_AMOUNT_MINOR,
  maximum: MAX_AMOUNT_MINOR,
  not: { const: 0 },
  description: 'Minor units: a credit is positive, a debit negative; never 0.',
} as const;

const noteSchema = {
  type: 'string',
  maxLength: MAX_NOTE_LENGTH,
  description: 'Free text for the issuer’s own records (never shown to the cardholder by us).',
} as const;

export const adjustmentBodySchema = named(
  'AdjustmentInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['balanceType', 'amountMinor', 'reasonCode'],
    properties: {
      balanceType: { type: 'string', enum: BALANCE_TYPES },
      amountMinor: signedAmount,
      merchantId: idSchema('mp', 'Required for branded: the merchant whose balance it is.'),
      reasonCode: {
        type: 'string',
        enum: ADJUSTMENT_REASON_CODES,
        description:
          'write_off forgives cashback the group owes (a refund after payout, summary owedMinor): balanceType cashback, ' +
          'a positive amountMinor of at most what it owes; the issuer funds it.',
      },
      note: noteSchema,
      transactionId: idSchema('txn', 'The purchase (a txn_ of this group) it corrects, if any.'),
    },
  },
  { balanceType: 'cashback', amountMinor: 500, reasonCode: 'goodwill', note: 'Late delivery, call 2026-11-20' },
);

export const adjustmentSchema = named(
  'Adjustment',
  {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'chgId', 'balanceType', 'amountMinor', 'reasonCode', 'rewardEventId', 'transferId', 'createdAt'],
    properties: {
      id: idSchema('adj'),
      chgId: idSchema('chg'),
      balanceType: { type: 'string', enum: BALANCE_TYPES },
      amountMinor: { type: 'integer', description: 'Signed: a credit is positive, a debit negative.' },
      currency: { type: 'string', enum: ['usd'] },
      merchantId: idSchema('mp'),
      reasonCode: { type: 'string', enum: ADJUSTMENT_REASON_CODES },
      note: noteSchema,
      transactionId: idSchema('txn'),
      claimId: idSchema('clm', 'The claim whose approval posted it.'),
      rewardEventId: idSchema(
        'brevt',
        'Its cashback_adjusted or branded_adjusted reward event (GET .../rewards/activity).',
      ),
      rewardGrantId: idSchema('rg', 'The grant a branded credit opened.'),
      transferId: {
        type: 'string',
        format: 'uuid',
        description:
          'Its ledger transfer (adjust_credit_*, adjust_debit_*, or write_off_cashback_owed for a write-off); the reward-events export names it too.',
      },
      createdAt: timestampSchema,
    },
  },
  {
    id: exampleId('adj'),
    chgId: exampleId('chg'),
    balanceType: 'cashback',
    amountMinor: 500,
    currency: 'usd',
    reasonCode: 'goodwill',
    note: 'Late delivery, call 2026-11-20',
    rewardEventId: exampleId('brevt'),
    transferId: '6f1c2a9e-4b7d-4e21-9c3a-0000000000f2',
    createdAt: EXAMPLE_TIME,
  },
);

export const adjustmentListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQueryProperties },
} as const;

export type AdjustmentInput = Validated<typeof adjustmentBodySchema>;
export type AdjustmentListQuery = Validated<typeof adjustmentListQuerySchema>;

/**
 * The cross-field rules the schema leaves to the route: a branded adjustment names its merchant, a
 * cashback one none; a write-off forgives owed cashback (a positive cashback amount).
 */
export function crossFieldViolation(input: AdjustmentInput): { path: string; message: string } | null {
  if (input.balanceType === 'branded' && !input.merchantId)
    return { path: '/merchantId', message: 'merchantId is required for a branded adjustment' };
  if (input.balanceType === 'cashback' && input.merchantId)
    return { path: '/merchantId', message: 'merchantId must be absent for a cashback adjustment' };
  const reason = reasonCodeViolation(input.balanceType, input.amountMinor, input.reasonCode);
  if (reason) return { path: '/reasonCode', message: reason };
  return null;
}
