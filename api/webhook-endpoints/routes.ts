// Issuer webhook endpoint routes (API.md, Webhooks; "Webhook endpoints (several per issuer)"):
// the singular endpoint (the issuer's first one) and the plural ones, their secrets, test events
// and the recovery of what an endpoint missed.
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import {
  createEndpoint,
  deleteEndpoint,
  findEndpoint,
  getEndpoint,
  listEndpoints,
  putEndpoint,
  recoverDeliveries,
  rotateEndpointSecret,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
} from './store';
import { presentEndpoint } from './present';
import {
  endpointBodySchema,
  endpointChangesSchema,
  endpointCreateSchema,
  endpointEnvelopeSchema,
  endpointListQuerySchema,
  endpointSchema,
  MAX_ENDPOINTS_PER_ISSUER,
  recoverAcceptedSchema,
  recoverSchema,
  rotatedSecretSchema,
  testEventAcceptedSchema,
  testEventSchema,
  type EndpointInput,
} from './schemas';

const tag = 'Webhooks';
const params = { endpointId: 'whe' } as const;
const ENDPOINT_OPERATIONS = [
  'getWebhookEndpointById',
  'updateWebhookEndpoint',
  'deleteWebhookEndpoint',
  'rotateWebhookEndpointSecret',
  'sendWebhookEndpointTest',
  'recoverWebhookEndpoint',
];

const URL_RULES =
  '400 `invalid_webhook_url`: not an absolute http(s) URI (RFC 3986), http for a production issuer, credentials, spaces or control characters (CR, LF), over 2048 characters. ' +
  '400 `destination_not_allowed`: the URL names or resolves to a loopback, private (RFC 1918), carrier-grade NAT, link-local, unique-local, multicast, broadcast, unspecified or reserved address ' +
  "(in any spelling, IPv4-mapped IPv6 included), a local-network name (localhost, *.internal, single-label...), or a port that HTTP clients refuse (the fetch standard's bad ports). " +
  'The host is checked again before every delivery attempt; an attempt to a refused destination fails with `destination_refused` without connecting.';

const URL_REASON_CODES = {
  invalid_webhook_url: 'the URL is no RFC 3986 http(s) URI, or breaks a rule above',
  destination_not_allowed: 'the host is not public, or the port is refused',
};

const ENDPOINT_DISABLED = {
  endpoint_disabled: 'the endpoint is disabled; PATCH its status to enabled first',
};

export function webhookEndpointRoutes(deps: AppDeps): RouteSpec[] {
  return [
    putWebhookEndpointRoute(deps),
    getWebhookEndpointRoute(deps),
    rotateWebhookSecretRoute(deps),
    createWebhookEndpointRoute(deps),
    listWebhookEndpointsRoute(deps),
    getWebhookEndpointByIdRoute(deps),
    updateWebhookEndpointRoute(deps),
    deleteWebhookEndpointRoute(deps),
    rotateWebhookEndpointSecretRoute(deps),
    sendWebhookEndpointTestRoute(deps),
    recoverWebhookEndpointRoute(deps),
  ];
}

function putWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'put',
    path: '/api/v2/webhook-endpoint',
    operationId: 'putWebhookEndpoint',
    summary: 'Create or replace the webhook endpoint; the signing secret is returned on creation only',
    description: URL_RULES,
    tag,
    auth: 'issuer',
    documentedBody: endpointBodySchema,
    envelope: endpointEnvelopeSchema,
    responses: {
      201: { description: 'Created; `signingSecret` holds the whsec_ secret.', schema: endpointSchema },
      200: { description: 'Updated; the secret is unchanged and not returned.', schema: endpointSchema },
    },
    errorStatuses: [409],
    reasonCodes: { 400: URL_REASON_CODES },
    async handle(ctx, { body }) {
      const input = body as EndpointInput;
      const { endpoint, signingSecret } = await putEndpoint(db, deps, issuerOf(ctx), input, clock.now());
      ctx.status = signingSecret ? 201 : 200;
      ctx.body = presentEndpoint(endpoint, signingSecret);
    },
  });
}

function getWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/webhook-endpoint',
    operationId: 'getWebhookEndpoint',
    summary: 'Read the webhook endpoint (without its secret)',
    tag,
    auth: 'issuer',
    responses: { 200: { description: 'The endpoint.', schema: endpointSchema } },
    errorStatuses: [404],
    async handle(ctx) {
      ctx.body = presentEndpoint(await getEndpoint(db, issuerOf(ctx).id));
    },
  });
}

function rotateWebhookSecretRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/webhook-endpoint/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: 'Replace the signing secret; the previous one keeps signing beside it for 24 h',
    tag,
    auth: 'issuer',
    responses: { 200: { description: 'The new secret.', schema: rotatedSecretSchema } },
    errorStatuses: [404, 409],
    async handle(ctx) {
      const rotated = await rotateSecret(db, deps.webhookSecretKeys, issuerOf(ctx).id, clock.now());
      ctx.body = {
        signingSecret: rotated.signingSecret,
        previousSecretExpiresAt: rotated.previousSecretExpiresAt.toISOString(),
      };
    },
  });
}

function createWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    summary: 'Add a webhook endpoint; its signing secret is returned now only',
    description:
      `At most ${MAX_ENDPOINTS_PER_ISSUER} endpoints per issuer. Each webhook goes to every enabled endpoint whose enabledTypes hold its type, ` +
      'with the same webhookId everywhere. ' +
      URL_RULES,
    tag,
    auth: 'issuer',
    body: endpointCreateSchema,
    responses: {
      201: {
        description: 'Created; `signingSecret` holds the whsec_ secret.',
        schema: endpointSchema,
        links: linksTo(ENDPOINT_OPERATIONS, { endpointId: fromBody('/id') }),
      },
    },
    errorStatuses: [409],
    reasonCodes: {
      400: URL_REASON_CODES,
      409: { endpoint_limit_reached: `the issuer already has ${MAX_ENDPOINTS_PER_ISSUER} endpoints` },
    },
    async handle(ctx, { body }) {
      const { endpoint, signingSecret } = await createEndpoint(db, deps, issuerOf(ctx), body, clock.now());
      ctx.status = 201;
      ctx.body = presentEndpoint(endpoint, signingSecret);
    },
  });
}

function listWebhookEndpointsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    summary: 'The webhook endpoints, oldest first (the first is the one /api/v2/webhook-endpoint addresses)',
    tag,
    auth: 'issuer',
    query: endpointListQuerySchema,
    responses: {
      200: {
        description: 'A page of endpoints, without their secrets.',
        schema: pageSchema(endpointSchema),
        links: linksTo(ENDPOINT_OPERATIONS, { endpointId: fromBody('/data/0/id') }),
      },
    },
    async handle(ctx, { query }) {
      ctx.body = await listEndpoints(db, issuerOf(ctx).id, query);
    },
  });
}

function getWebhookEndpointByIdRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/webhook-endpoints/{endpointId}',
    operationId: 'getWebhookEndpointById',
    summary: 'One webhook endpoint with its status and health (without its secret)',
    tag,
    auth: 'issuer',
    params,
    responses: { 200: { description: 'The endpoint.', schema: endpointSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentEndpoint(await findEndpoint(db, issuerOf(ctx).id, params.endpointId));
    },
  });
}

function updateWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'patch',
    path: '/api/v2/webhook-endpoints/{endpointId}',
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint: its URL, types, description, rate or status',
    description:
      '`status: disabled` stops every sending to it (disabledReason `manual`); its deliveries end skipped, and `recover` sends ' +
      'them once it is enabled again. `status: enabled` clears disabledReason and resets its health (consecutiveFailures 0, ' +
      'failingSince null). Setting the status it already has changes nothing. ' +
      URL_RULES,
    tag,
    auth: 'issuer',
    params,
    body: endpointChangesSchema,
    responses: { 200: { description: 'The updated endpoint.', schema: endpointSchema } },
    errorStatuses: [404],
    reasonCodes: { 400: URL_REASON_CODES },
    async handle(ctx, { params, body }) {
      const endpoint = await updateEndpoint(db, deps, issuerOf(ctx), params.endpointId, body, clock.now());
      ctx.body = presentEndpoint(endpoint);
    },
  });
}

function deleteWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'delete',
    path: '/api/v2/webhook-endpoints/{endpointId}',
    operationId: 'deleteWebhookEndpoint',
    summary: 'Remove a webhook endpoint; its deliveries stay visible on their webhooks',
    description:
      'Nothing more is sent to it. Deleting the first endpoint makes the next oldest the one /api/v2/webhook-endpoint addresses.',
    tag,
    auth: 'issuer',
    params,
    responses: { 204: { description: 'Deleted.' } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      await deleteEndpoint(db, issuerOf(ctx).id, params.endpointId);
      ctx.status = 204;
    },
  });
}

function rotateWebhookEndpointSecretRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/webhook-endpoints/{endpointId}/rotate-secret',
    operationId: 'rotateWebhookEndpointSecret',
    summary: "Replace an endpoint's signing secret; the previous one keeps signing beside it for 24 h",
    tag,
    auth: 'issuer',
    params,
    responses: { 200: { description: 'The new secret.', schema: rotatedSecretSchema } },
    errorStatuses: [404, 409],
    reasonCodes: { 409: { webhook_endpoint_conflict: 'another rotation of this secret won the race; retry' } },
    async handle(ctx, { params }) {
      const endpoint = await findEndpoint(db, issuerOf(ctx).id, params.endpointId);
      const rotated = await rotateEndpointSecret(db, deps.webhookSecretKeys, endpoint, clock.now());
      ctx.body = {
        signingSecret: rotated.signingSecret,
        previousSecretExpiresAt: rotated.previousSecretExpiresAt.toISOString(),
      };
    },
  });
}

function sendWebhookEndpointTestRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/webhook-endpoints/{endpointId}/test',
    operationId: 'sendWebhookEndpointTest',
    summary: "Send the type's published example to this endpoint only, as a test event",
    description:
      'The `data` is the example of the type in the webhooks section of this document; the envelope carries `"test": true`. ' +
      'Any type may be tried, whether or not it is one of the endpoint’s enabledTypes. ' +
      'The test webhook is recorded like any other: its attempts, retries and replay (GET /api/v2/webhooks/{webhookId}).',
    tag,
    auth: 'issuer',
    params,
    body: testEventSchema,
    responses: {
      202: {
        description: 'Recorded; the first attempt follows at once.',
        schema: testEventAcceptedSchema,
        links: linksTo(['getWebhook'], { webhookId: fromBody('/webhookId') }),
      },
    },
    errorStatuses: [404, 409],
    reasonCodes: { 409: ENDPOINT_DISABLED },
    async handle(ctx, { params, body }) {
      const webhookId = await sendTestEvent(db, issuerOf(ctx).id, params.endpointId, body.type, clock.now());
      ctx.status = 202;
      ctx.body = { webhookId };
    },
  });
}

function recoverWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/webhook-endpoints/{endpointId}/recover',
    operationId: 'recoverWebhookEndpoint',
    summary: 'Send again every webhook whose delivery to this endpoint failed or was skipped in a window',
    description:
      'The webhooks created in [since, until) whose delivery to this endpoint ended failed or skipped go back to it, with the ' +
      'same webhookIds and bodies, at the endpoint’s pace (its concurrency and rateLimitPerSecond); their attempts continue ' +
      'their numbering. Delivered and still running deliveries are left alone. ' +
      '400 `invalid_window`: since is in the future, or not before until (a rule across fields and the clock, which no JSON Schema states).',
    tag,
    auth: 'issuer',
    params,
    body: recoverSchema,
    responses: {
      202: {
        description: 'Reopened; the relays send them.',
        schema: recoverAcceptedSchema,
        links: linksTo(['getWebhookEndpointById'], { endpointId: fromPath('endpointId') }),
      },
    },
    errorStatuses: [404, 409],
    reasonCodes: {
      400: { invalid_window: 'since is in the future, or not before until' },
      409: ENDPOINT_DISABLED,
    },
    async handle(ctx, { params, body }) {
      const count = await recoverDeliveries(db, issuerOf(ctx).id, params.endpointId, body, clock.now());
      ctx.status = 202;
      ctx.body = { count };
    },
  });
}
