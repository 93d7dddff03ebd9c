// Operator replay of any issuer's webhook (DESIGN.md: operators re-run a failed webhook
// through the API or CLI), audited.
import { defineRoute, type RouteSpec } from '../route';
import type { AppDeps } from '../deps';
import { replayAsOperator } from './replay';
import { replayAcceptedSchema } from './schemas';

export function webhookAdminRoutes(deps: AppDeps): RouteSpec[] {
  const { db, clock } = deps;
  return [
    defineRoute({
      method: 'post',
      path: '/admin/v1/webhooks/{webhookId}/replay',
      operationId: 'adminReplayWebhook',
      summary: "Deliver any issuer's webhook again (audited)",
      tag: 'Operator',
      auth: 'operator',
      params: { webhookId: 'evt' },
      responses: { 202: { description: 'The replay started.', schema: replayAcceptedSchema } },
      errorStatuses: [404, 409, 503],
      async handle(ctx, { params }) {
        ctx.status = 202;
        ctx.body = await replayAsOperator(db, deps.temporal, params.webhookId, ctx.state.actor, clock.now());
      },
    }),
  ];
}
