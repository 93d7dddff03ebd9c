// Issuer webhook routes (API.md, Webhooks): the receiving endpoint and its secret, the
// webhook records with their attempts, and replay.
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import { findWebhook, getEndpoint, listWebhooks, putEndpoint, rotateSecret, webhookWithAttempts } from './store';
import { presentEndpoint } from './present';
import { replayWebhook } from './replay';
import {
  endpointBodySchema,
  endpointEnvelopeSchema,
  endpointSchema,
  replayAcceptedSchema,
  replayBodySchema,
  rotatedSecretSchema,
  webhookDetailSchema,
  webhookListQuerySchema,
  webhookSchema,
  type EndpointInput,
} from './schemas';

const tag = 'Webhooks';

export function webhookRoutes(deps: AppDeps): RouteSpec[] {
  return [
    putWebhookEndpointRoute(deps),
    getWebhookEndpointRoute(deps),
    rotateWebhookSecretRoute(deps),
    listWebhooksRoute(deps),
    getWebhookRoute(deps),
    replayWebhookRoute(deps),
  ];
}

function putWebhookEndpointRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'put',
    path: '/api/v2/webhook-endpoint',
    operationId: 'putWebhookEndpoint',
    summary: 'Create or replace the webhook endpoint; the signing secret is returned on creation only',
    description:
      '400 `invalid_webhook_url`: not an absolute http(s) URI (RFC 3986), http for a production issuer, credentials, spaces or control characters (CR, LF), over 2048 characters. ' +
      '400 `destination_not_allowed`: the URL names or resolves to a loopback, private (RFC 1918), carrier-grade NAT, link-local, unique-local, multicast, broadcast, unspecified or reserved address ' +
      "(in any spelling, IPv4-mapped IPv6 included), a local-network name (localhost, *.internal, single-label...), or a port that HTTP clients refuse (the fetch standard's bad ports). " +
      'The host is checked again before every delivery attempt; an attempt to a refused destination fails with `destination_refused` without connecting.',
    tag,
    auth: 'issuer',
    documentedBody: endpointBodySchema,
    envelope: endpointEnvelopeSchema,
    responses: {
      201: { description: 'Created; `signingSecret` holds the whsec_ secret.', schema: endpointSchema },
      200: { description: 'Updated; the secret is unchanged and not returned.', schema: endpointSchema },
    },
    errorStatuses: [409],
    reasonCodes: {
      400: {
        invalid_webhook_url: 'the URL is no RFC 3986 http(s) URI, or breaks a rule above',
        destination_not_allowed: 'the host is not public, or the port is refused',
      },
    },
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

function listWebhooksRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/webhooks',
    operationId: 'listWebhooks',
    summary: 'Webhook records, newest first, filtered by status and type',
    tag,
    auth: 'issuer',
    query: webhookListQuerySchema,
    responses: {
      200: {
        description: 'A page of webhooks.',
        schema: pageSchema(webhookSchema),
        links: linksTo(['getWebhook', 'replayWebhook'], { webhookId: fromBody('/data/0/webhookId') }),
      },
    },
    async handle(ctx, { query }) {
      ctx.body = await listWebhooks(db, issuerOf(ctx).id, query);
    },
  });
}

function getWebhookRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/webhooks/{webhookId}',
    operationId: 'getWebhook',
    summary: 'One webhook record with every delivery attempt',
    tag,
    auth: 'issuer',
    params: { webhookId: 'evt' },
    responses: { 200: { description: 'The webhook and its attempts, oldest first.', schema: webhookDetailSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = await webhookWithAttempts(db, await findWebhook(db, params.webhookId, issuerOf(ctx).id));
    },
  });
}

function replayWebhookRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/webhooks/{webhookId}/replay',
    operationId: 'replayWebhook',
    summary: 'Deliver a webhook again, same webhookId and body, on the full retry schedule',
    description:
      'Any status but delivering (a delivery still retrying answers 409). With `endpointId`, to that endpoint only; without it, to every enabled endpoint the webhook went to ' +
      '(or, if it went nowhere, to every enabled endpoint subscribing to its type). Receivers must answer 2xx to a webhook they already processed.',
    tag,
    auth: 'issuer',
    params: { webhookId: 'evt' },
    body: replayBodySchema,
    responses: { 202: { description: 'The replay started.', schema: replayAcceptedSchema } },
    errorStatuses: [404, 409, 503],
    reasonCodes: {
      404: { webhook_endpoint_not_found: 'endpointId names no endpoint of this issuer' },
      409: {
        webhook_delivery_in_progress: 'a delivery of the webhook is still retrying',
        endpoint_disabled: 'the endpoint named is disabled',
        no_webhook_endpoint: 'no enabled endpoint to replay to',
      },
    },
    async handle(ctx, { params, body }) {
      const webhook = await findWebhook(db, params.webhookId, issuerOf(ctx).id);
      const started = await replayWebhook(db, deps.temporal, webhook, deps.clock.now(), body?.endpointId);
      ctx.status = 202;
      ctx.body = {
        webhookId: started.webhookId,
        endpointId: started.endpointId,
        firstAttemptNumber: started.firstAttemptNumber,
        deliveries: started.deliveries.map(({ endpointId, firstAttemptNumber }) => ({
          endpointId,
          firstAttemptNumber,
        })),
      };
    },
  });
}
