// Issuer webhook routes (API.md, Webhooks): the webhook records with their deliveries and
// attempts, and replay. The endpoints have their own area (api/webhook-endpoints).
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import { findWebhook, listWebhooks, webhookWithAttempts } from './store';
import { replayWebhook } from './replay';
import {
  replayAcceptedSchema,
  replayBodySchema,
  webhookDetailSchema,
  webhookListQuerySchema,
  webhookSchema,
} from './schemas';

const tag = 'Webhooks';

export function webhookRoutes(deps: AppDeps): RouteSpec[] {
  return [listWebhooksRoute(deps), getWebhookRoute(deps), replayWebhookRoute(deps)];
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
