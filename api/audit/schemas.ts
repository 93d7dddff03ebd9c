// The operator audit log (the audit trail) as the operator API shows it.
import { timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { paginationQueryProperties } from '../pagination';

const HASH_EXAMPLE = 'a3f1c2d4e5b6978812ab34cd56ef7890a3f1c2d4e5b6978812ab34cd56ef7890';

export const auditEntrySchema = named(
  'AuditLogEntry',
  {
    type: 'object',
    required: ['id', 'seq', 'actor', 'action', 'targetId', 'details', 'createdAt', 'outcome', 'hash', 'prevHash'],
    properties: {
      id: { type: 'string' },
      seq: { type: 'integer', description: "The row's place in the chain, from 1, without a gap." },
      actor: {
        type: 'string',
        description:
          "Who: the operator's id (op_...), root (OPERATOR_TOKEN), cli:<user> (the admin CLI), an issuer token's id " +
          "(tok_..., the issuer's own postings) or the service's own name. Entries written before operators had names say operator.",
      },
      operatorRoles: {
        type: ['array', 'null'],
        items: { type: 'string' },
        description: "The roles the operator held at the call; null on rows that are not an operator call's.",
      },
      action: { type: 'string' },
      targetId: { type: ['string', 'null'] },
      outcome: {
        type: ['string', 'null'],
        enum: ['done', 'denied', 'failed', 'pending', null],
        description:
          "An operator call's: done, denied (403 by role), failed (any other error answer) or pending (waiting for a " +
          "second operator); null on the service's own rows and those written before the trail.",
      },
      statusCode: { type: ['integer', 'null'], description: 'The HTTP status the call was answered with, when known.' },
      requestId: { type: ['string', 'null'] },
      ip: { type: ['string', 'null'] },
      userAgent: { type: ['string', 'null'] },
      details: {
        type: 'object',
        additionalProperties: true,
        description: 'What changed (the fields the call set), or for a call that failed, its reasonCode as error.',
      },
      createdAt: timestampSchema,
      prevHash: { type: ['string', 'null'], description: "The previous row's hash; null on the first row." },
      hash: {
        type: 'string',
        description: 'SHA-256 (hex) over the fields and prevHash (docs/decisions/0058-audit-trail.md says how).',
      },
    },
  },
  {
    id: exampleId('aud'),
    seq: 42,
    actor: exampleId('op'),
    operatorRoles: ['admin'],
    action: 'token.create',
    targetId: exampleId('tok'),
    outcome: 'done',
    statusCode: null,
    requestId: 'req_0b3f5c1e-2d4a-4e6f-8a9b-1c2d3e4f5a6b',
    ip: '10.0.0.7',
    userAgent: 'curl/8.5.0',
    details: { issuerId: exampleId('iss'), label: 'production app servers' },
    createdAt: EXAMPLE_TIME,
    prevHash: HASH_EXAMPLE,
    hash: HASH_EXAMPLE,
  },
);

export const auditQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQueryProperties,
    actor: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: "Only this actor's rows (an operator's id, root, ...).",
    },
    action: { type: 'string', minLength: 1, maxLength: 200, description: 'Only this action (e.g. claim.approve).' },
    targetId: { type: 'string', minLength: 1, maxLength: 200, description: 'Only rows about this record.' },
    outcome: { type: 'string', enum: ['done', 'denied', 'failed', 'pending'] },
    from: { ...timestampSchema, description: 'Only rows written at or after this instant.' },
    to: { ...timestampSchema, description: 'Only rows written before this instant.' },
    format: {
      type: 'string',
      enum: ['json', 'ndjson'],
      default: 'json',
      description:
        'json: a page, newest first. ndjson: every matching row, oldest first in the chain order, one JSON object a ' +
        'line (limit and cursor do not apply), for an export.',
    },
  },
} as const;

export const auditVerdictSchema = named(
  'AuditChainVerdict',
  {
    type: 'object',
    required: ['ok', 'rows', 'headHash'],
    properties: {
      ok: { type: 'boolean' },
      rows: { type: 'integer', description: 'Rows checked before the first break (all of them when ok).' },
      firstBrokenId: { type: 'string', description: 'The first row where the chain breaks.' },
      firstBrokenSeq: { type: 'integer' },
      reason: {
        type: 'string',
        enum: ['edited', 'link', 'gap', 'head'],
        description:
          "edited: the row's fields no longer give its hash; link: its prevHash is not the row before's (a row " +
          'inserted, or the one before replaced); gap: a place skipped (a row deleted); head: the chain ends before ' +
          'the head the database keeps (its last rows deleted, or a row added past it).',
      },
      headHash: {
        type: ['string', 'null'],
        description: "The last row's hash: written down elsewhere, it proves later that nothing up to it changed.",
      },
    },
  },
  { ok: true, rows: 1204, headHash: HASH_EXAMPLE },
);
