// JSON schemas of the claim routes (API.md, Claims (missing or wrong reward)): the issuer's
// (file, list, read) and the operator's (review queue, approve, reject).
import { idSchema, timestampSchema } from '../schemas/common';
import { paginationQueryProperties } from '../pagination';
import { named } from '../schemas/named';
import { EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { externalIdSchema } from '../../core/domain/external-id';
import { BALANCE_TYPES } from '../../core/rules/adjustments';
import {
  CLAIM_REASONS,
  CLAIM_REJECTION_CODES,
  CLAIM_STATUSES,
  OPERATOR_APPROVED,
  OPERATOR_REJECTIONS,
  REVIEW_REASONS,
} from '../../core/rules/claims';
import type { Validated } from '../../core/validated';

const noteSchema = { type: 'string', maxLength: 500 } as const;

export const claimBodySchema = named(
  'ClaimInput',
  {
    type: 'object',
    additionalProperties: false,
    required: ['reason'],
    properties: {
      transactionId: idSchema('txn', 'The purchase (a txn_ of this group). Give this or externalId.'),
      externalId: {
        ...externalIdSchema,
        description: "The issuer's own id of the purchase, when it has no txn_ id at hand.",
      },
      reason: { type: 'string', enum: CLAIM_REASONS },
      merchantId: idSchema(
        'mp',
        'The merchant the cardholder says the purchase was at, if the service did not recognise it.',
      ),
      note: { ...noteSchema, description: "What the cardholder said; for the issuer's and the operator's eyes." },
    },
  },
  {
    transactionId: exampleId('txn'),
    reason: 'missing_reward',
    merchantId: exampleId('mp'),
    note: 'Bought coffee, no cashback',
  },
);

const minor = { type: 'integer', minimum: 0 } as const;

export const claimSchema = named(
  'Claim',
  {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'chgId', 'reason', 'status', 'adjustmentIds', 'workflowId', 'createdAt', 'updatedAt'],
    properties: {
      id: idSchema('clm'),
      chgId: idSchema('chg'),
      transactionId: idSchema('txn'),
      externalId: { type: 'string' },
      reason: { type: 'string', enum: CLAIM_REASONS },
      merchantId: idSchema('mp'),
      note: noteSchema,
      status: {
        type: 'string',
        enum: CLAIM_STATUSES,
        description: 'open (being decided), needs_review (an operator decides), approved, rejected.',
      },
      reasonCode: {
        type: 'string',
        enum: [...CLAIM_REJECTION_CODES, ...REVIEW_REASONS, OPERATOR_APPROVED],
        description:
          'rejected: why (automatic ones are proven by `evidence`); needs_review: merchant_not_recognised or reward_below_rules; approved: operator_approved.',
      },
      computedReward: {
        type: 'object',
        additionalProperties: false,
        required: ['cashbackMinor', 'brandedMinor'],
        description:
          "In review: what the rules give that the purchase did not get, with the completions of cumulative offers it would reach (evidence.progress); an approval posts it unless the operator gives another amount, which replaces the purchase's own reward (completions follow the rules).",
        properties: { cashbackMinor: minor, brandedMinor: minor },
      },
      evidence: {
        type: 'object',
        description:
          "What the decision saw: the transaction, its recorded match trace, the reward it kept and the rules of the merchant in question at the purchase time; in review, `progress`: each cumulative offer the purchase does not count towards yet, what it would add and the completions that reaches (an approval counts it, and posts them as the purchase's own).",
      },
      adjustmentIds: { type: 'array', items: idSchema('adj'), description: 'What the approval posted.' },
      resolutionNote: noteSchema,
      resolvedAt: timestampSchema,
      workflowId: { type: 'string', description: 'claim/<issuer>/<claim id>: the run in the Temporal UI.' },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('clm'),
    chgId: exampleId('chg'),
    transactionId: exampleId('txn'),
    reason: 'missing_reward',
    merchantId: exampleId('mp'),
    status: 'needs_review',
    reasonCode: 'merchant_not_recognised',
    computedReward: { cashbackMinor: 125, brandedMinor: 0 },
    adjustmentIds: [],
    workflowId: `claim/${exampleId('iss')}/${exampleId('clm')}`,
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_LATER,
  },
);

export const claimListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQueryProperties, status: { type: 'string', enum: CLAIM_STATUSES } },
} as const;

export const adminClaimListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: { type: 'string', enum: CLAIM_STATUSES, description: 'needs_review: the review queue, oldest first.' },
    issuerId: idSchema('iss'),
  },
} as const;

export const approveBodySchema = named(
  'ClaimApproval',
  {
    type: 'object',
    additionalProperties: false,
    properties: {
      amountMinor: {
        type: 'integer',
        minimum: 1,
        maximum: 100_000_000,
        description:
          "Post this amount instead of the purchase's own computed reward, as one adjustment of balanceType (completions of cumulative offers follow the rules).",
      },
      balanceType: { type: 'string', enum: BALANCE_TYPES, description: 'With amountMinor; cashback when absent.' },
      learnDescriptor: {
        type: 'boolean',
        default: false,
        description:
          "Add the purchase's acquirer merchant id (when it has one) or descriptor to the merchant's match rules, so the next purchase matches on its own.",
      },
      note: noteSchema,
    },
  },
  { learnDescriptor: true, note: 'Descriptor SQ *BLUEBTL is Blue Bottle' },
);

export const rejectBodySchema = named(
  'ClaimRejection',
  {
    type: 'object',
    additionalProperties: false,
    required: ['reasonCode'],
    properties: { reasonCode: { type: 'string', enum: OPERATOR_REJECTIONS }, note: noteSchema },
  },
  { reasonCode: 'not_eligible', note: 'Online order, offer is in-store only' },
);

export type ClaimInput = Validated<typeof claimBodySchema>;
export type ClaimListQuery = Validated<typeof claimListQuerySchema>;
export type AdminClaimListQuery = Validated<typeof adminClaimListQuerySchema>;
export type ApproveInput = Validated<typeof approveBodySchema>;
export type RejectInput = Validated<typeof rejectBodySchema>;
