// The operator's side of claims (API.md, Claims): the review queue and the decision on a claim
// in review, handed to the claim's workflow, which posts the adjustment and answers.
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import { exampleOf, named } from '../schemas/named';
import { adminClaimListQuerySchema, approveBodySchema, claimSchema, rejectBodySchema } from './schemas';
import { decideClaimAsOperator, findClaimAsOperator, listClaimsAsOperator } from './store';
import { presentClaimForOperator } from './present';
import { exampleId } from '../schemas/examples';

const tag = 'Operator';
const params = { claimId: 'clm' } as const;

const operatorClaimSchema = named(
  'OperatorClaim',
  {
    ...claimSchema,
    required: [...claimSchema.required, 'issuerId'],
    properties: {
      ...claimSchema.properties,
      issuerId: { type: 'string' },
      resolvedBy: { type: 'string', description: 'service (an automatic rejection), or the operator.' },
    },
  },
  { ...(exampleOf(claimSchema) as object), issuerId: exampleId('iss') },
);

export function claimAdminRoutes(deps: AppDeps): RouteSpec[] {
  return [listRoute(deps), getRoute(deps), approveRoute(deps), rejectRoute(deps)];
}

const DECIDED = {
  claim_not_in_review: 'the claim is open (being decided), approved or rejected: only claims in review are decided',
};

function listRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/claims',
    operationId: 'listClaimsAsOperator',
    summary: 'Claims of every issuer, oldest first (status=needs_review: the review queue)',
    tag,
    auth: 'operator',
    query: adminClaimListQuerySchema,
    responses: {
      200: {
        description: 'A page of claims.',
        schema: pageSchema(operatorClaimSchema),
        links: linksTo(['getClaimAsOperator', 'approveClaim', 'rejectClaim'], { claimId: fromBody('/data/0/id') }),
      },
    },
    async handle(ctx, { query }) {
      const page = await listClaimsAsOperator(db, query);
      ctx.body = { data: page.data.map(presentClaimForOperator), nextCursor: page.nextCursor };
    },
  });
}

function getRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/admin/v1/claims/{claimId}',
    operationId: 'getClaimAsOperator',
    summary: 'One claim with its evidence',
    tag,
    auth: 'operator',
    params,
    responses: { 200: { description: 'The claim.', schema: operatorClaimSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentClaimForOperator(await findClaimAsOperator(db, params.claimId));
    },
  });
}

function approveRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/claims/{claimId}/approve',
    operationId: 'approveClaim',
    summary: 'Approve a claim in review: post its missing_reward adjustment (and learn the descriptor)',
    description:
      'Posts the computed reward (a cashback and/or a branded adjustment at the merchant), or amountMinor of balanceType, as ' +
      "missing_reward adjustments funded by the issuer and linked to the transaction; not bound by the issuer's adjustmentLimitMinor. " +
      "learnDescriptor adds the purchase's acquirer merchant id or descriptor to the merchant's match rules (audited). " +
      'Answers once the claim is approved and claim_resolved is recorded.',
    tag,
    auth: 'operator',
    params,
    body: approveBodySchema,
    responses: { 200: { description: 'The approved claim.', schema: operatorClaimSchema } },
    errorStatuses: [404, 409, 503],
    reasonCodes: { 409: { ...DECIDED, branded_not_enabled: 'a branded amount at a merchant without branded balance' } },
    async handle(ctx, { params, body }) {
      const claim = await decideClaimAsOperator(db, deps.temporal, params.claimId, {
        decision: 'approve',
        actor: ctx.state.actor as string,
        ...body,
      });
      ctx.body = presentClaimForOperator(claim);
    },
  });
}

function rejectRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'post',
    path: '/admin/v1/claims/{claimId}/reject',
    operationId: 'rejectClaim',
    summary: 'Reject a claim in review',
    tag,
    auth: 'operator',
    params,
    body: rejectBodySchema,
    responses: { 200: { description: 'The rejected claim.', schema: operatorClaimSchema } },
    errorStatuses: [404, 409, 503],
    reasonCodes: { 409: DECIDED },
    async handle(ctx, { params, body }) {
      const claim = await decideClaimAsOperator(db, deps.temporal, params.claimId, {
        decision: 'reject',
        actor: ctx.state.actor as string,
        ...body,
      });
      ctx.body = presentClaimForOperator(claim);
    },
  });
}
