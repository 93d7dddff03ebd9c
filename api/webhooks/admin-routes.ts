// Operator replay of any issuer's webhook (DESIGN.md: operators re-run a failed webhook
// through the API or CLI), audited.
import { defineRoute, type RouteSpec } from '../route';
import type { AppDeps } from '../deps';
import { recordAudit } from '../admin/audit';
import { findWebhook } from './records';
import { replayWebhook } from './replay';
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
        const webhook = await findWebhook(db, params.webhookId);
        const started = await replayWebhook(deps.temporal, webhook);
        await recordAudit(
          db,
          { actor: ctx.state.actor, action: 'webhook.replay', targetId: webhook.id, details: { issuerId: webhook.issuerId, workflowId: started.workflowId } },
          clock.now(),
        );
        ctx.status = 202;
        ctx.body = started;
      },
    }),
  ];
}
