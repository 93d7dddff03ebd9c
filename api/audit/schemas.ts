// The operator audit log as the operator API shows it.
import { timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';

export const auditEntrySchema = named(
  'AuditLogEntry',
  {
    type: 'object',
    properties: {
      id: { type: 'string' },
      actor: {
        type: 'string',
        description:
          "Who: the operator's id (op_...), root (OPERATOR_TOKEN), cli:<user> (the admin CLI) or an issuer token's id " +
          "(tok_..., the issuer's own postings). Entries written before operators had names say operator.",
      },
      action: { type: 'string' },
      targetId: { type: ['string', 'null'] },
      details: { type: 'object', additionalProperties: true },
      createdAt: timestampSchema,
    },
  },
  {
    id: exampleId('aud'),
    actor: exampleId('op'),
    action: 'token.create',
    targetId: exampleId('tok'),
    details: { issuerId: exampleId('iss'), label: 'production app servers' },
    createdAt: EXAMPLE_TIME,
  },
);
