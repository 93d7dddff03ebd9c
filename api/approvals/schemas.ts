// Approvals (four eyes) as the operator API shows them.
import { idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { paginationQueryProperties } from '../pagination';

export const APPROVAL_STATUSES = ['pending', 'approving', 'approved', 'failed', 'rejected'] as const;

export const approvalSchema = named(
  'Approval',
  {
    type: 'object',
    required: ['approvalId', 'status', 'action', 'operationId', 'requiredRole', 'reason', 'makerId', 'createdAt'],
    properties: {
      approvalId: idSchema('apr'),
      status: {
        type: 'string',
        enum: APPROVAL_STATUSES,
        description:
          'pending: waiting for a second operator; approving: approved, being carried out; approved: carried out (result ' +
          'is its answer); failed: carried out and refused (result is the error); rejected: never carried out.',
      },
      action: { type: 'string', description: "The audit trail's name of the call (e.g. statement.payment)." },
      operationId: { type: 'string', description: 'The operation that waits (as /openapi.json names it).' },
      requiredRole: { type: 'string', description: 'The role the second operator must hold: the operation’s own.' },
      targetId: { type: ['string', 'null'] },
      reason: {
        type: 'string',
        enum: ['claim_above_threshold', 'statement_payment', 'budget_raise', 'new_admin'],
        description: 'Why it needs a second operator.',
      },
      request: {
        type: 'object',
        description: 'What the call would do: its path parameters and body as the maker sent them.',
        additionalProperties: true,
      },
      makerId: { type: 'string', description: 'Who asked (an operator id, or root).' },
      checkerId: { type: ['string', 'null'], description: 'Who approved or rejected it.' },
      result: {
        type: ['object', 'null'],
        description: "Once carried out: the call's answer, statusCode and body.",
        additionalProperties: true,
      },
      createdAt: timestampSchema,
      decidedAt: { ...timestampSchema, type: ['string', 'null'] },
    },
  },
  {
    approvalId: exampleId('apr'),
    status: 'pending',
    action: 'statement.payment',
    operationId: 'payStatement',
    requiredRole: 'finance',
    targetId: exampleId('stm'),
    reason: 'statement_payment',
    request: { params: { statementId: exampleId('stm') }, body: { amountMinor: 182500, reference: 'wire 2026-11' } },
    makerId: exampleId('op'),
    checkerId: null,
    result: null,
    createdAt: EXAMPLE_TIME,
    decidedAt: null,
  },
);

/** The first call's answer: nothing done yet. */
export const pendingApprovalSchema = named(
  'PendingApproval',
  {
    type: 'object',
    required: ['approvalId', 'status'],
    properties: {
      approvalId: idSchema('apr'),
      status: { type: 'string', enum: ['pending'] },
      reason: approvalSchema.properties.reason,
      requiredRole: { type: 'string' },
    },
  },
  { approvalId: exampleId('apr'), status: 'pending', reason: 'statement_payment', requiredRole: 'finance' },
);

export const approvalListQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    status: {
      type: 'string',
      enum: APPROVAL_STATUSES,
      description: 'Only approvals in this status (pending: the queue).',
    },
  },
} as const;

/** The answer of a four-eyes route's first call (each such route declares it as its 202). */
export const PENDING_APPROVAL = {
  description:
    'Held for a second operator (four eyes): nothing is done yet. Another operator with the role approves it at ' +
    'POST /admin/v1/approvals/{approvalId}/approve, which carries it out.',
  schema: pendingApprovalSchema,
};
