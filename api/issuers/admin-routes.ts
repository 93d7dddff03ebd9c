// Operator API (API.md, Operator API): issuers and their tokens.
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import type { AppDeps } from '../deps';
import { createIssuer, createToken, getIssuer, revokeToken, updateIssuer } from './store';
import { issuerChangesSchema, issuerInputSchema, issuerSchema, tokenSchema } from './schemas';
import { presentIssuer, presentToken } from './present';

const tag = 'Operator';

export function issuerAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [
    createIssuerRoute(deps),
    getIssuerRoute(deps),
    updateIssuerRoute(deps),
    createIssuerTokenRoute(deps),
    revokeIssuerTokenRoute(deps),
  ];
}

function createIssuerRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/issuers',
    operationId: 'createIssuer',
    summary: 'Create an issuer (environment fixed at creation)',
    tag,
    auth: 'operator',
    body: issuerInputSchema,
    responses: {
      201: {
        description: 'Created.',
        schema: issuerSchema,
        links: linksTo(['getIssuer', 'updateIssuer', 'createIssuerToken'], { issuerId: fromBody('/id') }),
      },
    },
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
  return defineRoute({
    method: 'patch',
    path: '/admin/v1/issuers/{issuerId}',
    operationId: 'updateIssuer',
    summary:
      'Change an issuer name, availability delay, rate limits, ingestion backlog limit, webhook retention or when its failing webhook endpoints are disabled',
    tag,
    auth: 'operator',
    params: { issuerId: 'iss' },
    body: issuerChangesSchema,
    responses: { 200: { description: 'The updated issuer.', schema: issuerSchema } },
    errorStatuses: [404],
    reasonCodes: { 400: { invalid_body: 'webhookEndpointDisableAfter is a duration below 1h or above 365d' } },
    async handle(ctx, { params, body }) {
      ctx.body = presentIssuer(await updateIssuer(db, params.issuerId, body, ctx.state.actor, clock.now()));
      // Other processes hear the NOTIFY; this one forgets before it answers.
      deps.tokenCache?.evictIssuer(params.issuerId);
    },
  });
}

function createIssuerTokenRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
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
    responses: {
      201: {
        description: 'Created; `token` holds the secret.',
        schema: tokenSchema,
        links: linksTo(['revokeIssuerToken'], { issuerId: fromPath('issuerId'), tokenId: fromBody('/id') }),
      },
    },
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
