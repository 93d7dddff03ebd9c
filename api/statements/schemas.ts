// JSON schemas of the merchant statement routes (API.md, "Funded offers", Statements), validated
// by ajv and published in /openapi.json unchanged.
import { idSchema, timestampSchema } from '../schemas/common';
import { paginationQueryProperties } from '../pagination';
import { exampleOf, named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import type { Validated } from '../../core/validated';

/** A payment larger than any statement could be is a typo, refused before it reaches the ledger. */
const MAX_PAYMENT_MINOR = 100_000_000_000;

const periodSchema = {
  type: 'string',
  pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$',
  description: 'A calendar month in UTC, YYYY-MM.',
} as const;

export const statementRunBodySchema = named(
  'StatementRunInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['period'],
    properties: { period: periodSchema },
  },
  { period: '2026-11' },
);

export const statementRunSchema = named(
  'StatementRun',
  {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'period', 'status', 'statementCount', 'currency', 'totalDueMinor', 'createdAt', 'completedAt'],
    properties: {
      id: idSchema('stmrun'),
      period: periodSchema,
      status: {
        type: 'string',
        enum: ['processing', 'completed', 'failed'],
        description:
          'failed: a chunk failed past its retries; the statements it issued stay issued, another run bills the rest.',
      },
      statementCount: { type: 'integer', minimum: 0, description: 'Statements issued so far.' },
      currency: { type: 'string', enum: ['usd'] },
      totalDueMinor: { type: 'integer', description: 'The sum of their totalDueMinor so far.' },
      failureReason: { type: 'string', description: 'Why a failed run stopped.' },
      createdAt: timestampSchema,
      completedAt: { type: ['string', 'null'], format: 'date-time' },
    },
  },
  {
    id: exampleId('stmrun'),
    period: '2026-02',
    status: 'completed',
    statementCount: 182,
    currency: 'usd',
    totalDueMinor: 98_412_650,
    createdAt: EXAMPLE_TIME,
    completedAt: EXAMPLE_LATER,
  },
);

const lineSchema = (description: string) => ({ type: 'integer', description }) as const;

export const statementSchema = named(
  'Statement',
  {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'runId',
      'issuerId',
      'merchantId',
      'period',
      'status',
      'currency',
      'lines',
      'totalDueMinor',
      'paidMinor',
      'transferCount',
      'createdAt',
      'updatedAt',
    ],
    properties: {
      id: idSchema('stm'),
      runId: idSchema('stmrun'),
      issuerId: idSchema('iss'),
      merchantId: idSchema('mp'),
      period: periodSchema,
      status: {
        type: 'string',
        enum: ['issued', 'paid'],
        description:
          'paid once the payments cover totalDueMinor; a statement whose total is 0 or below (the merchant owes nothing) is ' +
          'issued paid.',
      },
      currency: { type: 'string', enum: ['usd'] },
      lines: {
        type: 'object',
        additionalProperties: false,
        required: [
          'cashbackFundedMinor',
          'brandedFundedMinor',
          'brandedSpentMinor',
          'clawedBackMinor',
          'breakageMinor',
          'commissionMinor',
        ],
        properties: {
          cashbackFundedMinor: lineSchema("Cashback the merchant funded: the rewards less the issuer's share."),
          brandedFundedMinor: lineSchema("Branded balance the merchant funded: the rewards less the issuer's share."),
          brandedSpentMinor: lineSchema('Branded balance spent at the merchant, which it honoured instead of paying.'),
          clawedBackMinor: lineSchema("Rewards refunds clawed back, less the issuer's share returned to it."),
          breakageMinor: {
            type: 'integer',
            minimum: 0,
            description:
              'Information, not in the total: branded balance the merchant funded that expired unspent (the programme keeps it).',
          },
          commissionMinor: lineSchema('Commission on qualifying purchases, less what refunds returned.'),
        },
      },
      totalDueMinor: {
        type: 'integer',
        description:
          "cashbackFunded + brandedFunded - brandedSpent - clawedBack + commission: the net movement of the merchant's " +
          'receivable over the statement’s transfers, payments excluded; negative when the programme owes the merchant.',
      },
      paidMinor: { type: 'integer', minimum: 0 },
      transferCount: { type: 'integer', minimum: 0, description: 'Transfers on the statement (its csv lines).' },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('stm'),
    runId: exampleId('stmrun'),
    issuerId: exampleId('iss'),
    merchantId: exampleId('mp'),
    period: '2026-02',
    status: 'issued',
    currency: 'usd',
    lines: {
      cashbackFundedMinor: 412_500,
      brandedFundedMinor: 96_000,
      brandedSpentMinor: 51_200,
      clawedBackMinor: 12_300,
      breakageMinor: 4_100,
      commissionMinor: 61_800,
    },
    totalDueMinor: 506_800,
    paidMinor: 0,
    transferCount: 9_214,
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);

export const statementListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    period: periodSchema,
    merchantId: idSchema('mp'),
    issuerId: idSchema('iss'),
  },
} as const;
export type StatementListQuery = Validated<typeof statementListQuerySchema>;

export const statementQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: {
      type: 'string',
      enum: ['json', 'csv'],
      default: 'json',
      description: 'csv: a header line, then one line per transfer on the statement.',
    },
  },
} as const;

export const StatementCsv = named('StatementCsv', {
  type: 'string',
  description:
    'A header line (transferId,kind,line,postedAt,amountMinor,transactionId,rewardEventId), then one line per transfer ' +
    'in ledger order: amountMinor is what the transfer adds to what the merchant owes (negative when it takes away), so ' +
    'the lines sum to totalDueMinor; line names the statement line it is counted on.',
});

export const statementPaymentBodySchema = named(
  'StatementPaymentInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['amountMinor', 'reference'],
    properties: {
      amountMinor: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_PAYMENT_MINOR,
        description: 'What the merchant paid: at most what is still due (409 payment_exceeds_due).',
      },
      reference: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: "The payment's reference in the bank's records (a wire or ACH id).",
      },
    },
  },
  { amountMinor: 506_800, reference: 'ACH 20260301-000173' },
);
export type StatementPaymentInput = Validated<typeof statementPaymentBodySchema>;

export const statementPaymentSchema = named(
  'StatementPayment',
  {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'statementId', 'amountMinor', 'currency', 'reference', 'transferId', 'createdAt', 'statement'],
    properties: {
      id: idSchema('stmpay'),
      statementId: idSchema('stm'),
      amountMinor: { type: 'integer', minimum: 1 },
      currency: { type: 'string', enum: ['usd'] },
      reference: { type: 'string' },
      transferId: {
        type: 'string',
        description: 'The merchant_payment transfer: merchant_cash (debit) to merchant_receivable (credit).',
      },
      createdAt: timestampSchema,
      statement: statementSchema,
    },
  },
  {
    id: exampleId('stmpay'),
    statementId: exampleId('stm'),
    amountMinor: 506_800,
    currency: 'usd',
    reference: 'ACH 20260301-000173',
    transferId: '6f1c2a9e-4b7d-4e21-9c3a-0000000000f1',
    createdAt: EXAMPLE_LATER,
    statement: {
      ...(exampleOf(statementSchema) as object),
      status: 'paid',
      paidMinor: 506_800,
      updatedAt: EXAMPLE_LATER,
    },
  },
);
