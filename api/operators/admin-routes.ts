// Operator API (API.md, "Operators with names"): named operators, their roles and tokens, and
// who the caller is. Which role each route needs is in api/operators/route-roles.ts.
import { PENDING_APPROVAL } from '../approvals/schemas';
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import type { AppDeps } from '../deps';
import { pageSchema, paginationQueryProperties } from '../pagination';
import { createOperator, getOperator, listOperators, newAdminHold, rotateOperatorToken, updateOperator } from './store';
import {
  currentOperatorSchema,
  operatorChangesSchema,
  operatorInputSchema,
  operatorSchema,
  operatorWithTokenSchema,
} from './schemas';
import { presentOperator, presentOperatorWithToken } from './present';
import { ROOT_OPERATOR_ID, type AuthenticatedOperator } from './roles';

const tag = 'Operator';
const params = { operatorId: 'op' } as const;
const NOT_FOUND = { operator_not_found: 'no such operator' };

export function operatorAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [createRoute(deps), listRoute(deps), updateRoute(deps), rotateRoute(deps), meRoute(deps)];
}

function createRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/operators',
    operationId: 'createOperator',
    summary: 'Name an operator with roles; their token is shown once',
    tag,
    auth: 'operator',
    body: operatorInputSchema,
    responses: {
      201: {
        description: 'Created; `token` holds the secret, which is never shown again (rotate to get a new one).',
        schema: operatorWithTokenSchema,
        links: linksTo(['updateOperator', 'rotateOperatorToken'], { operatorId: fromBody('/id') }),
      },
      202: PENDING_APPROVAL,
    },
    errorStatuses: [409],
    fourEyes: {
      when: 'an operator named with the admin role while an active admin exists',
      check: (_ctx, { body }) => newAdminHold(db, [], body.roles),
    },
    reasonCodes: { 409: { operator_email_taken: 'another operator has this email' } },
    async handle(ctx, { body }) {
      const { operator, secret } = await createOperator(db, body, ctx.state.actor, clock.now());
      ctx.status = 201;
      ctx.body = presentOperatorWithToken(operator, secret);
    },
  });
}

function listRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/operators',
    operationId: 'listOperators',
    summary: 'Named operators, oldest first (root is configuration, not listed)',
    tag,
    auth: 'operator',
    query: { type: 'object', additionalProperties: false, properties: paginationQueryProperties },
    responses: {
      200: {
        description: 'A page of operators.',
        schema: pageSchema(operatorSchema),
        links: linksTo(['updateOperator', 'rotateOperatorToken'], { operatorId: fromBody('/data/0/id') }),
      },
    },
    async handle(ctx, { query }) {
      const page = await listOperators(db, query.limit, query.cursor);
      ctx.body = { data: page.data.map(presentOperator), nextCursor: page.nextCursor };
    },
  });
}

function updateRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'patch',
    path: '/admin/v1/operators/{operatorId}',
    operationId: 'updateOperator',
    summary: "Change an operator's name or roles, or disable them (their token is refused at once)",
    tag,
    auth: 'operator',
    params,
    body: operatorChangesSchema,
    responses: { 200: { description: 'The updated operator.', schema: operatorSchema }, 202: PENDING_APPROVAL },
    errorStatuses: [404, 409],
    fourEyes: {
      when: 'roles that make the operator an admin, while an active admin exists',
      async check(_ctx, { params, body }) {
        if (body.roles === undefined) return undefined;
        const operator = await db.operator.findUnique({ where: { id: params.operatorId }, select: { roles: true } });
        return operator ? newAdminHold(db, operator.roles, body.roles) : undefined;
      },
    },
    reasonCodes: {
      404: NOT_FOUND,
      409: {
        last_admin:
          'OPERATOR_ROOT is disabled and the change would leave no active operator with the admin role (name another first)',
      },
    },
    async handle(ctx, { params, body }) {
      const context = { actor: ctx.state.actor as string, rootEnabled: deps.config.operatorToken !== undefined };
      ctx.body = presentOperator(await updateOperator(db, params.operatorId, body, context, clock.now()));
    },
  });
}

function rotateRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/operators/{operatorId}/tokens',
    operationId: 'rotateOperatorToken',
    summary: "Rotate an operator's token: a new one, shown once; the old one is refused at once",
    tag,
    auth: 'operator',
    params,
    responses: {
      201: {
        description: 'The operator with the new `token`.',
        schema: operatorWithTokenSchema,
        links: linksTo(['updateOperator'], { operatorId: fromPath('operatorId') }),
      },
    },
    errorStatuses: [404, 409],
    reasonCodes: { 404: NOT_FOUND, 409: { operator_disabled: 'the operator is disabled: set status active first' } },
    async handle(ctx, { params }) {
      const { operator, secret } = await rotateOperatorToken(db, params.operatorId, ctx.state.actor, clock.now());
      ctx.status = 201;
      ctx.body = presentOperatorWithToken(operator, secret);
    },
  });
}

function meRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/me',
    operationId: 'getCurrentOperator',
    summary: 'Who the caller is: the operator (or root) and their roles',
    tag,
    auth: 'operator',
    responses: { 200: { description: 'The caller.', schema: currentOperatorSchema } },
    async handle(ctx) {
      const caller = ctx.state.operator as AuthenticatedOperator;
      if (caller.id === ROOT_OPERATOR_ID) {
        ctx.body = { id: caller.id, root: true, roles: caller.roles };
        return;
      }
      const operator = await getOperator(db, caller.id);
      ctx.body = { id: operator.id, root: false, name: operator.name, email: operator.email, roles: operator.roles };
    },
  });
}
