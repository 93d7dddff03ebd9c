// Claim routes of the issuer (API.md, Claims): a cardholder says a purchase's reward is missing
// or wrong; the claim's workflow decides it from the evidence, or sends it to an operator.
import { errors } from '../../core/errors';
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import { issuerNow } from '../sandbox/issuer-clock';
import { pageSchema } from '../pagination';
import type { AppDeps } from '../deps';
import { claimBodySchema, claimListQuerySchema, claimSchema } from './schemas';
import { fileClaim, findClaim, listClaims } from './store';
import { presentClaim } from './present';

const tag = 'Claims';
const params = { chgId: 'chg' } as const;

export function claimRoutes(deps: AppDeps): RouteSpec[] {
  return [fileClaimRoute(deps), listClaimsRoute(deps), getClaimRoute(deps)];
}

const DECISION =
  'The claim is decided by its workflow (claim/<issuer>/<claim id>) from the stored transaction, its match trace and the rules at ' +
  'the purchase time: rejected with the reason the evidence proves (transaction_not_received, reward_pending, not_a_purchase, ' +
  'currency_not_supported, merchant_not_identified, purchase_refunded (refunded in full), already_rewarded, or the eligibility reason: merchant_not_activated, ' +
  'no_active_offer, chg_inactive, merchant_inactive, below_min_spend, mcc_excluded, offer_cap_reached, redemption_limit_reached), ' +
  'or needs_review with ' +
  'the reward the rules give (a merchant the descriptor did not match, or less reward than the rules give), which an operator ' +
  'approves (posting a missing_reward adjustment) or rejects. Every end emits claim_resolved. ' +
  'Give exactly one of transactionId and externalId (400 invalid_body otherwise). With an Idempotency-Key the claim keeps ' +
  'the key: the same request again answers the same claim, even after the API died between filing it and answering.';

function fileClaimRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'post',
    path: '/api/v2/chg/{chgId}/claims',
    operationId: 'fileClaim',
    summary: 'Claim a missing or wrong reward for a purchase',
    description: DECISION,
    tag,
    auth: 'issuer',
    params,
    body: claimBodySchema,
    responses: {
      202: {
        description: 'Filed (status open); its decision follows within seconds (GET it, or wait for claim_resolved).',
        schema: claimSchema,
        links: linksTo(['getClaim'], { chgId: fromPath('chgId'), claimId: fromBody('/id') }),
      },
    },
    errorStatuses: [404, 409, 503],
    reasonCodes: {
      404: {
        chg_not_found: 'the group is not the issuer’s',
        transaction_not_found: 'transactionId is not a txn_ of this group',
        merchant_not_found: 'merchantId is not a merchant the issuer sees',
      },
      409: {
        claim_open: 'the transaction has a claim still open or in review (details.claimId)',
        idempotency_key_reused: 'the Idempotency-Key filed another claim request (details.claimId)',
      },
    },
    async handle(ctx, { params, body }) {
      if ((body.transactionId === undefined) === (body.externalId === undefined))
        throw errors.validation('invalid_body', 'Give exactly one of transactionId and externalId.', [
          { path: '/transactionId', message: 'exactly one of transactionId and externalId is required' },
        ]);
      const key = ctx.get('idempotency-key');
      const caller = {
        issuerId: issuerOf(ctx).id,
        now: issuerNow(ctx, clock),
        ...(key ? { idempotencyKey: key } : {}),
      };
      const claim = await fileClaim(db, deps.temporal, caller, params.chgId, body);
      ctx.status = 202;
      ctx.body = presentClaim(claim);
    },
  });
}

function listClaimsRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/claims',
    operationId: 'listClaims',
    summary: "The group's claims, newest first",
    tag,
    auth: 'issuer',
    params,
    query: claimListQuerySchema,
    responses: {
      200: {
        description: 'A page of claims.',
        schema: pageSchema(claimSchema),
        links: linksTo(['getClaim'], { chgId: fromPath('chgId'), claimId: fromBody('/data/0/id') }),
      },
    },
    errorStatuses: [404],
    async handle(ctx, { params, query }) {
      const page = await listClaims(db, issuerOf(ctx).id, params.chgId, query);
      ctx.body = { data: page.data.map(presentClaim), nextCursor: page.nextCursor };
    },
  });
}

function getClaimRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/claims/{claimId}',
    operationId: 'getClaim',
    summary: 'One claim with its evidence: the match trace and the reward the rules give',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', claimId: 'clm' },
    responses: { 200: { description: 'The claim.', schema: claimSchema } },
    errorStatuses: [404],
    async handle(ctx, { params }) {
      ctx.body = presentClaim(await findClaim(db, issuerOf(ctx).id, params.chgId, params.claimId));
    },
  });
}
