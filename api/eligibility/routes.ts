// Earn and spend eligibility of a merchant for a group (SPEC.md 4.2, API.md), decided by
// the pure rules in core/rules so the transaction workflow decides the same way.
import { stackingPolicy } from '../../core/rules/stacking';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import type { AppDeps } from '../deps';
import { evaluateEarn, REWARD_CURRENCY } from '../../core/rules/eligibility';
import { evaluateSpend } from '../../core/rules/spend-eligibility';
import { loadGroupMerchant } from '../catalogue/group-merchant';
import { toInstant } from '../../core/timestamp';
import { issuerNow } from '../sandbox/issuer-clock';
import { eligibilityQuerySchema, eligibilitySchema, spendEligibilitySchema, spendQuerySchema } from './schemas';

/** Spend eligibility sums the group's open grants at the merchant: bounded like a draw. */
const MAX_SPEND_GRANTS = 1000;

const tag = 'Eligibility';
const params = { chgId: 'chg', merchantId: 'mp' } as const;

export function eligibilityRoutes(deps: AppDeps): RouteSpec[] {
  return [getEarnEligibilityRoute(deps), getSpendEligibilityRoute(deps)];
}

function getEarnEligibilityRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchant/{merchantId}/eligibility',
    operationId: 'getEarnEligibility',
    summary: 'Would a purchase at this merchant earn?',
    description:
      'Without a query: evaluated now, on activation, offers, group and merchant state. With amountMinor (and optionally mcc): ' +
      'a previewed transaction, adding min-spend, MCC and cap checks and the estimated reward of the winning offer. ' +
      'An offer whose budget for the period of `at` is spent does not qualify (offer_budget_exhausted); one with little ' +
      'left estimates what is left. ' +
      '`at` evaluates at another instant. A deactivated group reports chg_inactive.',
    tag,
    auth: 'issuer',
    params,
    query: eligibilityQuerySchema,
    responses: { 200: { description: 'The decision.', schema: eligibilitySchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p, query }) {
      const at = query.at ? toInstant(query.at) : issuerNow(ctx, clock);
      // Budgets as they stand now, for the period `at` falls in: a purchase of that date draws from it.
      const { group, merchant, offers, activation, earnedSoFarByOffer, redeemedSoFarByOffer } = await loadGroupMerchant(
        db,
        issuerOf(ctx),
        p.chgId,
        p.merchantId,
        {
          offers: { budgetAt: at },
          activation: true,
          earned: true,
        },
      );
      const decision = evaluateEarn({
        merchant: { id: merchant.id, status: merchant.status },
        offers,
        activation,
        groupStatus: group.status,
        transaction:
          query.amountMinor === undefined
            ? undefined
            : { amountMinor: query.amountMinor, mcc: query.mcc, currency: REWARD_CURRENCY, at },
        // What the group kept per offer, as settlement reads it: per-group caps apply here too.
        earnedSoFarByOffer,
        redeemedSoFarByOffer,
        now: at,
        stacking: stackingPolicy(merchant.stacking, merchant.stackCapBps),
      });
      ctx.body = {
        merchantId: merchant.id,
        eligible: decision.eligible,
        reasons: decision.reasons,
        eligibleOfferIds: decision.eligibleOfferIds,
        ...(decision.winningOfferId
          ? { winningOfferId: decision.winningOfferId, estimatedRewardMinor: decision.estimatedRewardMinor }
          : {}),
        evaluatedAt: decision.at.toISOString(),
      };
    },
  });
}

function getSpendEligibilityRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchant/{merchantId}/spend-eligibility',
    operationId: 'getSpendEligibility',
    summary: 'Could branded balance be spent at this merchant now?',
    description:
      'Balances in usd minor units. Pending balance waits for the longer of the issuer and merchant availability delays.',
    tag,
    auth: 'issuer',
    params,
    query: spendQuerySchema,
    responses: { 200: { description: 'The decision.', schema: spendEligibilitySchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p, query }) {
      const issuer = issuerOf(ctx);
      const now = issuerNow(ctx, clock);
      const { group, merchant, grants } = await loadGroupMerchant(db, issuer, p.chgId, p.merchantId, {
        grants: { at: now, limit: MAX_SPEND_GRANTS },
      });
      const decision = evaluateSpend({
        merchant: {
          status: merchant.status,
          brandedEnabled: merchant.brandedEnabled,
          spendMinimumMinor: merchant.brandedSpendMinimumMinor,
          availabilityDelayDays: merchant.brandedAvailabilityDelayDays,
        },
        groupStatus: group.status,
        grants,
        issuerDelayDays: issuer.brandedAvailabilityDelayDays,
        amountMinor: query.amountMinor,
        at: now,
      });
      ctx.body = { merchantId: merchant.id, currency: REWARD_CURRENCY, ...decision };
    },
  });
}
