// Schemas of the operator accounts (API.md, "Operators with names").
import { idSchema, timestampSchema } from '../schemas/common';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import { OPERATOR_ROLES, ROLE_DESCRIPTIONS, ROOT_OPERATOR_ID } from './roles';

const rolesDescription =
  'Each mutating /admin route needs one role; every role reads. ' +
  OPERATOR_ROLES.map((role) => `\`${role}\`: ${ROLE_DESCRIPTIONS[role]}`).join('; ') +
  '.';

export const rolesSchema = {
  type: 'array',
  minItems: 1,
  maxItems: OPERATOR_ROLES.length,
  uniqueItems: true,
  items: { type: 'string', enum: OPERATOR_ROLES },
  description: rolesDescription,
} as const;

const nameSchema = { type: 'string', minLength: 1, maxLength: 200 } as const;
// Deliberately loose: an address the person reads, not one this service sends mail to.
const emailSchema = { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' } as const;

export const operatorInputSchema = named('OperatorInput', {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'email', 'roles'],
  properties: {
    name: nameSchema,
    email: { ...emailSchema, description: 'Unique, compared without case (stored lower-case).' },
    roles: rolesSchema,
  },
} as const);

export const operatorChangesSchema = named('OperatorChanges', {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: nameSchema,
    roles: { ...rolesSchema, description: `Replaces the roles. ${rolesDescription}` },
    status: {
      type: 'string',
      enum: ['active', 'disabled'],
      description:
        'disabled: the token is revoked and refused at once (401). active again: rotate to give the operator a new token.',
    },
  },
} as const);

const operatorProperties = {
  id: idSchema('op'),
  name: { type: 'string' },
  email: { type: 'string' },
  roles: { type: 'array', items: { type: 'string', enum: OPERATOR_ROLES } },
  status: { type: 'string', enum: ['active', 'disabled'] },
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
} as const;

const operatorExample = {
  id: exampleId('op'),
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  roles: ['support', 'finance'],
  status: 'active',
  createdAt: EXAMPLE_TIME,
  updatedAt: EXAMPLE_TIME,
};

export const operatorSchema = named(
  'Operator',
  {
    type: 'object',
    required: ['id', 'name', 'email', 'roles', 'status', 'createdAt', 'updatedAt'],
    properties: operatorProperties,
  },
  operatorExample,
);

export const operatorWithTokenSchema = named(
  'OperatorWithToken',
  {
    type: 'object',
    required: ['id', 'name', 'email', 'roles', 'status', 'createdAt', 'updatedAt', 'token'],
    properties: {
      ...operatorProperties,
      token: {
        type: 'string',
        pattern: '^rwd_op_[A-Za-z0-9_-]{43}$',
        description: 'The secret (Authorization: Bearer). Returned once; only its hash is stored.',
      },
    },
  },
  { ...operatorExample, token: `rwd_op_${Buffer.alloc(32, 42).toString('base64url')}` },
);

export const currentOperatorSchema = named(
  'CurrentOperator',
  {
    type: 'object',
    required: ['id', 'root', 'roles'],
    properties: {
      id: {
        type: 'string',
        description: `The operator's id, or \`${ROOT_OPERATOR_ID}\` for OPERATOR_TOKEN: the name the audit log gives the caller.`,
      },
      root: { type: 'boolean', description: 'The break-glass account of OPERATOR_TOKEN, which holds every role.' },
      name: { type: 'string' },
      email: { type: 'string' },
      roles: { type: 'array', items: { type: 'string', enum: OPERATOR_ROLES } },
    },
  },
  { id: exampleId('op'), root: false, name: 'Ada Lovelace', email: 'ada@example.com', roles: ['support', 'finance'] },
);
