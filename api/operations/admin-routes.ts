// Operator routes for failed processing (API.md, Operator API): reprocess a transaction.
import { defineRoute, type RouteSpec } from '../route';
import { idSchema } from '../schemas/common';
import type { AppDeps } from '../deps';
import { reprocessTransaction } from './reprocess';
import { named } from '../schemas/named';
import { exampleId } from '../schemas/examples';

export function operationsAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: 'post',
      path: '/admin/v1/transactions/{txnId}/reprocess',
      operationId: 'reprocessTransaction',
      summary: 'Re-run the processing of a transaction (txn_) or an authorization preview (auth_) that ended unknown',
      description:
        'Only transactions whose status is unknown (processing failed for good) are reprocessed; others are a 409 ' +
        'not_reprocessable. The status goes back to pending and the purchase workflow re-runs the step; activities are ' +
        'idempotent, so nothing posts twice. Written to the operator audit log.',
      tag: 'Operator',
      auth: 'operator',
      params: { txnId: ['txn', 'auth'] },
      body: {
        type: 'object',
        additionalProperties: false,
        properties: { reason: { type: 'string', minLength: 1, maxLength: 500 } },
      },
      responses: {
        202: {
          description: 'Reprocessing started.',
          schema: named(
            'ReprocessAccepted',
            {
              type: 'object',
              properties: {
                transactionId: idSchema(
                  ['txn', 'auth'] as const,
                  'The settlement (txn_) or authorization (auth_) reprocessed.',
                ),
                status: { const: 'pending' },
                previousStatus: { type: 'string' },
                workflowId: { type: 'string' },
              },
            },
            {
              transactionId: exampleId('txn'),
              status: 'pending',
              previousStatus: 'unknown',
              workflowId: `txn/${exampleId('iss')}/${exampleId('txn')}`,
            },
          ),
        },
      },
      errorStatuses: [404, 409, 503],
      async handle(ctx, { params, body }) {
        ctx.status = 202;
        ctx.body = await reprocessTransaction(
          deps.db,
          deps.temporal,
          params.txnId,
          ctx.state.actor,
          deps.clock.now(),
          body?.reason,
        );
      },
    }),
  ];
}
