// The first call of a four-eyes operation (API.md, "Four eyes"): when its route's rule says it
// needs a second operator, it is recorded as an approval and answered 202, and nothing else is
// done. Mounted inside the Idempotency-Key's scope (api/route.ts), so the maker's retry with the
// same key gets the same approval back. The approval's carrying out (admin-routes.ts) runs the
// same handler with the held request and passes here without stopping.
import type { Context } from 'koa';
import type { Db } from '../../prisma/client';
import type { RouteInput, RouteSpec } from '../route';
import type { Clock } from '../deps';
import type { AuthenticatedOperator } from '../operators/roles';
import { ROUTE_ROLES } from '../operators/route-roles';
import { ROUTE_ACTIONS } from '../audit/route-actions';
import { createApproval } from './store';

/** The routes a held call can be carried out by, by operationId (api/route.ts puts them here). */
export const APPROVABLE_ROUTES = 'approvableRoutes';

/** Set on a call that carries an approval out: its handler runs, the rule is not asked again. */
export const CARRYING_OUT = 'carryingOutApproval';

export type ApprovalGate = (
  ctx: Context,
  spec: RouteSpec,
  input: RouteInput<unknown, Record<string, unknown>>,
) => Promise<boolean>;

export function createApprovalGate(db: Db, clock: Clock): ApprovalGate {
  return async (ctx, spec, input) => {
    if (!spec.fourEyes || ctx.state[CARRYING_OUT]) return false;
    const reason = await spec.fourEyes.check(ctx, input);
    if (reason === undefined) return false;
    const operator = ctx.state.operator as AuthenticatedOperator;
    const params = Object.keys(input.params);
    const approval = await createApproval(
      db,
      {
        action: ROUTE_ACTIONS[spec.operationId],
        operationId: spec.operationId,
        requiredRole: ROUTE_ROLES[spec.operationId],
        targetId: params.length > 0 ? input.params[params[params.length - 1]] : null,
        reason,
        request: {
          params: input.params,
          query: input.query as Record<string, unknown>,
          body: input.body ?? null,
          idempotencyKey: ctx.get('Idempotency-Key') || null,
        },
        makerId: operator.id,
      },
      clock.now(),
    );
    ctx.status = 202;
    ctx.body = { approvalId: approval.id, status: 'pending', reason, requiredRole: approval.requiredRole };
    return true;
  };
}
