// The operator's side of claims (API.md, Claims): the review queue and the decision on a claim
// in review, handed to the claim's workflow, which posts the adjustment and answers.
import { PENDING_APPROVAL } from '../approvals/schemas';
import { fromBody, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import { exampleOf, named } from '../schemas/named';
import { adminClaimListQuerySchema, approveBodySchema, claimSchema, rejectBodySchema } from './schemas';
import {
  claimApprovalHold,
  DECISION_WAIT_MS,
  decideClaimAsOperator,
  findClaimAsOperator,
  listClaimsAsOperator,
} from './store';
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
  claim_not_in_review:
    'the claim is open (being decided), approved or rejected, or another decision racing with this one resolved it first: ' +
    'only claims in review are decided, and of decisions racing on one claim exactly one succeeds',
};
const NOT_APPLIED = {
  workflow_engine_unavailable:
    `no worker applied the decision within ${DECISION_WAIT_MS / 1000} s (or Temporal is unreachable): nothing was done, the ` +
    'claim is still in review, and the decision will not be applied later; retry after Retry-After',
};
const BOUNDED =
  `Answers within about ${DECISION_WAIT_MS / 1000} s whatever the workers do: the outcome once the claim's workflow has applied ` +
  'the decision, or 503 workflow_engine_unavailable (Retry-After) when it did not in that time, and then nothing was done and ' +
  'never will be. Of approve and reject calls racing on one claim exactly one succeeds; the others get 409 claim_not_in_review. ' +
  'With an Idempotency-Key, a retry of a decision that succeeded replays its answer; after a 503 the same key runs the decision again.';

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
      "The credit is the purchase's own reward: cashback is on hold until the purchase's return window ends, a refund of the " +
      'purchase takes it back in proportion (to the issuer), and it repays first what the group owes. The computed reward ' +
      'shrinks in proportion with refunds processed since the review; a purchase refunded in full since then is refused. ' +
      "A purchase the review found missing from a cumulative offer's progress (evidence.progress) is counted towards it, " +
      "and the completions its net amount reaches as the group stands now are posted as the purchase's own completions " +
      "(the merchant's, from the offer's budget, taken back by the purchase's refunds); amountMinor replaces only the purchase's own reward. " +
      "learnDescriptor adds the purchase's acquirer merchant id or descriptor to the merchant's match rules (audited). " +
      'A 200 means the claim is approved, its adjustments posted and claim_resolved recorded. ' +
      BOUNDED,
    tag,
    auth: 'operator',
    params,
    body: approveBodySchema,
    responses: { 200: { description: 'The approved claim.', schema: operatorClaimSchema }, 202: PENDING_APPROVAL },
    errorStatuses: [404, 409, 503],
    fourEyes: {
      when:
        "an approval posting more than the claim's issuer's approvalThresholdMinor (the computed reward; with amountMinor, " +
        'that amount plus the completions of cumulative offers the review found)',
      check: (_ctx, { params, body }) => claimApprovalHold(db, params.claimId, body.amountMinor),
    },
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
    description: `A 200 means the claim is rejected and claim_resolved recorded. ${BOUNDED}`,
    tag,
    auth: 'operator',
    params,
    body: rejectBodySchema,
    responses: { 200: { description: 'The rejected claim.', schema: operatorClaimSchema } },
    errorStatuses: [404, 409, 503],
    reasonCodes: { 409: DECIDED, 503: NOT_APPLIED },
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
