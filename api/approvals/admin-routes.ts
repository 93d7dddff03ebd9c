// Operator API (API.md, "Operators with names", "Four eyes"): the approvals queue, and the
// second operator's decision. Approving carries the held call out at once, by the same handler
// the first call would have run, on the checker's word; its answer is kept on the approval.
import type { Context } from 'koa';
import { defineRoute, type RouteSpec } from '../route';
import { createdAtKey, createdAtKeyset, pageSchema, toPage } from '../pagination';
import type { AppDeps } from '../deps';
import { ApiError } from '../../core/errors';
import { operatorCall } from '../../core/domain/audit';
import type { AuthenticatedOperator } from '../operators/roles';
import { approvalListQuerySchema, approvalSchema } from './schemas';
import { completeApproval, findApproval, listApprovals, takeApproval, type HeldRequest } from './store';
import { presentApproval } from './present';
import { APPROVABLE_ROUTES, CARRYING_OUT } from './gate';

const tag = 'Operator approvals';
const params = { approvalId: 'apr' } as const;

const DECIDED = {
  approval_not_pending: 'decided already (details.status): two operators deciding at once, one wins',
  same_operator: 'the operator who asked cannot decide: a second one must',
};

export function approvalAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [listRoute(deps), getRoute(deps), approveRoute(deps), rejectRoute(deps)];
}

function listRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/admin/v1/approvals',
    operationId: 'listApprovals',
    summary: 'Approvals, oldest first: status=pending is the queue waiting for a second operator',
    tag,
    auth: 'operator',
    query: approvalListQuerySchema,
    responses: { 200: { description: 'A page of approvals.', schema: pageSchema(approvalSchema) } },
    async handle(ctx, { query }) {
      const keyset = createdAtKeyset(query.cursor, 'asc');
      const rows = await listApprovals(deps.db, { status: query.status, keyset, take: query.limit + 1 });
      const page = toPage(rows, query.limit, createdAtKey);
      ctx.body = { data: page.data.map(presentApproval), nextCursor: page.nextCursor };
    },
  });
}

function getRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'get',
    path: '/admin/v1/approvals/{approvalId}',
    operationId: 'getApproval',
    summary: 'One approval: what it holds, who asked and decided, and what carrying it out answered',
    tag,
    auth: 'operator',
    params,
    responses: { 200: { description: 'The approval.', schema: approvalSchema } },
    errorStatuses: [404],
    reasonCodes: { 404: { approval_not_found: 'no such approval' } },
    async handle(ctx, { params: p }) {
      ctx.body = presentApproval(await findApproval(deps.db, p.approvalId));
    },
  });
}

function approveRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/admin/v1/approvals/{approvalId}/approve',
    operationId: 'approveApproval',
    summary: 'Approve a held call as the second operator: it is carried out, once',
    description:
      'By an operator other than the one who asked, holding the role the held call needs. The call runs now with the ' +
      "request as the maker sent it (their Idempotency-Key included), on this operator's word; its answer is the " +
      "approval's result (status approved), or its error (status failed: e.g. a payment now exceeding what is due). " +
      'Of two operators approving at once, one carries it out and the other gets 409 approval_not_pending.',
    tag,
    auth: 'operator',
    params,
    responses: { 200: { description: 'The approval, carried out (result).', schema: approvalSchema } },
    errorStatuses: [404, 409],
    reasonCodes: { 404: { approval_not_found: 'no such approval' }, 409: DECIDED },
    async handle(ctx, { params: p }) {
      const checker = ctx.state.operator as AuthenticatedOperator;
      const approval = await takeApproval(deps.db, p.approvalId, checker, 'approve', deps.clock.now());
      const outcome = await carryOut(ctx, approval.operationId, approval.request as unknown as HeldRequest, {
        id: approval.id,
        makerId: approval.makerId,
      });
      const done = await completeApproval(deps.db, approval.id, withoutSecret(outcome), deps.clock.now());
      ctx.status = 200;
      // A token the call made (a new admin's) is shown once, here, and never stored.
      ctx.body = { ...presentApproval(done), result: { statusCode: outcome.statusCode, body: outcome.body } };
    },
  });
}

function rejectRoute(deps: AppDeps): RouteSpec {
  return defineRoute({
    method: 'post',
    path: '/admin/v1/approvals/{approvalId}/reject',
    operationId: 'rejectApproval',
    summary: 'Reject a held call as the second operator: it is never carried out',
    tag,
    auth: 'operator',
    params,
    responses: { 200: { description: 'The approval, rejected.', schema: approvalSchema } },
    errorStatuses: [404, 409],
    reasonCodes: { 404: { approval_not_found: 'no such approval' }, 409: DECIDED },
    async handle(ctx, { params: p }) {
      const checker = ctx.state.operator as AuthenticatedOperator;
      ctx.body = presentApproval(await takeApproval(deps.db, p.approvalId, checker, 'reject', deps.clock.now()));
    },
  });
}

/** The answer as the approval keeps it: a secret it holds (a new operator's token) left out. */
function withoutSecret<T extends { body: unknown }>(outcome: T): T {
  const body = outcome.body;
  if (body === null || typeof body !== 'object' || !('token' in body)) return outcome;
  const { token: _shownOnce, ...rest } = body as Record<string, unknown>;
  return { ...outcome, body: rest };
}

/**
 * Runs the held call's own handler with the held request. The maker's Idempotency-Key is the
 * key the handler reads (a statement payment keys its transfer by it), so carrying out again
 * after a crash changes nothing twice. An answer the handler refuses with is the approval's
 * result, not this call's error: the approval was decided either way.
 */
async function carryOut(
  ctx: Context,
  operationId: string,
  held: HeldRequest,
  approval: { id: string; makerId: string },
): Promise<{ status: 'approved' | 'failed'; statusCode: number; body: unknown }> {
  const spec = (ctx.state[APPROVABLE_ROUTES] as Map<string, RouteSpec>).get(operationId);
  if (!spec) throw new Error(`approval of ${operationId}: no such route to carry it out`);
  ctx.state[CARRYING_OUT] = true;
  const call = operatorCall.getStore();
  if (call) call.approval = approval;
  if (held.idempotencyKey) ctx.req.headers['idempotency-key'] = held.idempotencyKey;
  else delete ctx.req.headers['idempotency-key'];
  try {
    await spec.handle(ctx, { params: held.params, query: held.query, body: held.body });
    return { status: 'approved', statusCode: ctx.status, body: ctx.body };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: 'failed', statusCode: err.status, body: err.toBody() };
  } finally {
    delete ctx.state[CARRYING_OUT];
  }
}
