// Operator API (API.md, Operator API): issuers, their tokens, the audit log.
import { defineRoute, type RouteSpec } from '../route';
import { idSchema, timestampSchema } from '../schemas/common';
import { cursorDate, decodeCursor, pageSchema, paginationQueryProperties, toPage } from '../pagination';
import type { AppDeps } from '../deps';
import { named } from '../schemas/named';
import { EXAMPLE_TIME, exampleId } from '../schemas/examples';
import {
  createIssuer,
  createToken,
  getIssuer,
  presentIssuer,
  presentToken,
  revokeToken,
  updateIssuer,
  type IssuerChanges,
  type IssuerInput,
} from './issuers';

const issuerNameSchema = { type: 'string', minLength: 1, maxLength: 200 };
const delaySchema = {
  type: 'integer',
  minimum: 0,
  maximum: 365,
  description: 'Issuer minimum availability delay of branded balance, in days.',
};
// Bounds as the database's CHECKs (migration 20261123050000_issuer_rate_limits).
const rateLimitChangeSchema = {
  type: ['object', 'null'],
  additionalProperties: false,
  minProperties: 1,
  description:
    'Overrides of the rate limits for every token of this issuer; a field left out keeps its value, null resets it to the ' +
    "deployment's default, and `rateLimit: null` resets both. Takes effect on the next request (every API process forgets " +
    'its cached copy of the issuer at once, or within 60 s at worst).',
  properties: {
    requestsPerSecond: { type: ['integer', 'null'], minimum: 1, maximum: 1_000_000 },
    eventsPerSecond: {
      type: ['integer', 'null'],
      minimum: 1,
      maximum: 10_000_000,
      description: 'Ingestion: events per second.',
    },
  },
};

const issuerSchema = named(
  'Issuer',
  {
    type: 'object',
    required: ['id', 'name', 'environment', 'brandedAvailabilityDelayDays', 'createdAt'],
    properties: {
      id: idSchema('iss'),
      name: { type: 'string' },
      environment: { type: 'string', enum: ['sandbox', 'production'] },
      brandedAvailabilityDelayDays: { type: 'integer' },
      rateLimit: {
        type: 'object',
        required: ['requestsPerSecond', 'eventsPerSecond'],
        description: "The issuer's rate-limit overrides; null means the deployment's default.",
        properties: {
          requestsPerSecond: { type: ['integer', 'null'] },
          eventsPerSecond: { type: ['integer', 'null'] },
        },
      },
      createdAt: timestampSchema,
      updatedAt: timestampSchema,
    },
  },
  {
    id: exampleId('iss'),
    name: 'Example Bank',
    environment: 'sandbox',
    brandedAvailabilityDelayDays: 0,
    rateLimit: { requestsPerSecond: null, eventsPerSecond: 5000 },
    createdAt: EXAMPLE_TIME,
    updatedAt: EXAMPLE_TIME,
  },
);

const tokenSchema = named(
  'IssuerToken',
  {
    type: 'object',
    required: ['id', 'label', 'createdAt'],
    properties: {
      id: idSchema('tok'),
      token: { type: 'string', description: 'The secret. Returned once, at creation; only its hash is stored.' },
      label: { type: ['string', 'null'] },
      createdAt: timestampSchema,
      revokedAt: { type: ['string', 'null'] },
    },
  },
  {
    id: exampleId('tok'),
    token: `rwd_sk_${Buffer.alloc(32, 42).toString('base64url')}`,
    label: 'production app servers',
    createdAt: EXAMPLE_TIME,
    revokedAt: null,
  },
);

const auditEntrySchema = named(
  'AuditLogEntry',
  {
    type: 'object',
    properties: {
      id: { type: 'string' },
      actor: { type: 'string' },
      action: { type: 'string' },
      targetId: { type: ['string', 'null'] },
      details: { type: 'object', additionalProperties: true },
      createdAt: timestampSchema,
    },
  },
  {
    id: exampleId('aud'),
    actor: 'operator',
    action: 'token.create',
    targetId: exampleId('tok'),
    details: { issuerId: exampleId('iss'), label: 'production app servers' },
    createdAt: EXAMPLE_TIME,
  },
);

const tag = 'Operator';

export function adminRoutes(deps: AppDeps): RouteSpec[] {
  return [
    createIssuerRoute(deps),
    getIssuerRoute(deps),
    updateIssuerRoute(deps),
    createIssuerTokenRoute(deps),
    revokeIssuerTokenRoute(deps),
    listAuditLogRoute(deps),
  ];
}

function createIssuerRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute<IssuerInput>({
    method: 'post',
    path: '/admin/v1/issuers',
    operationId: 'createIssuer',
    summary: 'Create an issuer (environment fixed at creation)',
    tag,
    auth: 'operator',
    body: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'environment'],
      properties: {
        name: issuerNameSchema,
        environment: { type: 'string', enum: ['sandbox', 'production'] },
        brandedAvailabilityDelayDays: delaySchema,
      },
    },
    responses: { 201: { description: 'Created.', schema: issuerSchema } },
    async handle(ctx, { body }) {
      ctx.status = 201;
      ctx.body = presentIssuer(await createIssuer(db, body, ctx.state.actor, clock.now()));
    },
  });
}

function getIssuerRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/issuers/{issuerId}',
    operationId: 'getIssuer',
    summary: 'Read an issuer',
    tag,
    auth: 'operator',
    params: { issuerId: 'iss' },
    responses: { 200: { description: 'The issuer.', schema: issuerSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentIssuer(await getIssuer(db, params.issuerId));
    },
  });
}

function updateIssuerRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute<IssuerChanges>({
    method: 'patch',
    path: '/admin/v1/issuers/{issuerId}',
    operationId: 'updateIssuer',
    summary: 'Change an issuer name, availability delay or rate limits',
    tag,
    auth: 'operator',
    params: { issuerId: 'iss' },
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        name: issuerNameSchema,
        brandedAvailabilityDelayDays: delaySchema,
        rateLimit: rateLimitChangeSchema,
      },
    },
    responses: { 200: { description: 'The updated issuer.', schema: issuerSchema } },
    errorStatuses: [404],
    async handle(ctx, { params, body }) {
      ctx.body = presentIssuer(await updateIssuer(db, params.issuerId, body, ctx.state.actor, clock.now()));
      // Other processes hear the NOTIFY; this one forgets before it answers.
      deps.tokenCache?.evictIssuer(params.issuerId);
    },
  });
}

function createIssuerTokenRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute<{ label?: string }>({
    method: 'post',
    path: '/admin/v1/issuers/{issuerId}/tokens',
    operationId: 'createIssuerToken',
    summary: 'Create an API token for an issuer; the secret is shown once',
    tag,
    auth: 'operator',
    params: { issuerId: 'iss' },
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { label: { type: 'string', minLength: 1, maxLength: 200 } },
    },
    responses: { 201: { description: 'Created; `token` holds the secret.', schema: tokenSchema } },
    errorStatuses: [404],
    async handle(ctx, { params, body }) {
      const { token, secret } = await createToken(db, params.issuerId, body?.label, ctx.state.actor, clock.now());
      ctx.status = 201;
      ctx.body = presentToken(token, secret);
    },
  });
}

function revokeIssuerTokenRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'delete',
    path: '/admin/v1/issuers/{issuerId}/tokens/{tokenId}',
    operationId: 'revokeIssuerToken',
    summary: 'Revoke a token, effective at once',
    tag,
    auth: 'operator',
    params: { issuerId: 'iss', tokenId: 'tok' },
    responses: { 204: { description: 'Revoked (also when it already was).' } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      await revokeToken(db, params.issuerId, params.tokenId, ctx.state.actor, clock.now());
      deps.tokenCache?.evictIssuer(params.issuerId);
      ctx.status = 204;
    },
  });
}

function listAuditLogRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute<unknown, { limit: number; cursor?: string }>({
    method: 'get',
    path: '/admin/v1/audit-log',
    operationId: 'listAuditLog',
    summary: 'Operator audit log, newest first',
    tag,
    auth: 'operator',
    query: { type: 'object', additionalProperties: false, properties: paginationQueryProperties },
    responses: { 200: { description: 'A page of entries.', schema: pageSchema(auditEntrySchema) } },
    async handle(ctx, { query }) {
      const after = decodeCursor(query.cursor, 2);
      const rows = await db.operatorAuditLog.findMany({
        where: after
          ? {
              OR: [
                { createdAt: { lt: cursorDate(after[0]) } },
                { createdAt: cursorDate(after[0]), id: { lt: String(after[1]) } },
              ],
            }
          : {},
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: query.limit + 1,
      });
      const page = toPage(rows, query.limit, (r) => [r.createdAt.toISOString(), r.id]);
      ctx.body = {
        data: page.data.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })),
        nextCursor: page.nextCursor,
      };
    },
  });
}
