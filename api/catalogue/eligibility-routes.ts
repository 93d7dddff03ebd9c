// Earn and spend eligibility of a merchant for a group (SPEC.md 4.2, API.md), decided by
// the pure rules in core/rules so the transaction workflow decides the same way.
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import type { AppDeps } from '../deps';
import { evaluateEarn, REWARD_CURRENCY } from '../../core/rules/eligibility';
import { evaluateSpend } from '../../core/rules/spend-eligibility';
import { fromDbMinor } from '../../core/ledger';
import type { CatalogueStatus } from '../../core/rules/offer-status';
import { eligibilityQuerySchema, eligibilitySchema, spendEligibilitySchema, spendQuerySchema } from './schemas';
import { requireGroup, requireVisibleMerchant } from './scope';
import { readActivation } from './activation-store';
import { loadBrandedGrants } from './branded-grants';
import { toEarnOffer } from './present';

export function eligibilityRoutes(deps: AppDeps): RouteSpec[] {
  const { db, clock } = deps;
  const tag = 'Eligibility';
  const params = { chgId: 'chg', merchantId: 'mp' } as const;
  return [
    defineRoute<unknown, { amountMinor?: number; mcc?: string; at?: string }>({
      method: 'get',
      path: '/api/v2/chg/{chgId}/merchant/{merchantId}/eligibility',
      operationId: 'getEarnEligibility',
      summary: 'Would a purchase at this merchant earn?',
      description:
        'Without a query: evaluated now, on activation, offers, group and merchant state. With amountMinor (and optionally mcc): ' +
        'a previewed transaction, adding min-spend, MCC and cap checks and the estimated reward of the winning offer. ' +
        '`at` evaluates at another instant. A deactivated group reports chg_inactive.',
      tag,
      auth: 'issuer',
      params,
      query: eligibilityQuerySchema,
      responses: { 200: { description: 'The decision.', schema: eligibilitySchema } },
      errorStatuses: [404],
      async handle(ctx, { params: p, query }) {
        const issuerId = issuerOf(ctx).id;
        const group = await requireGroup(db, issuerId, p.chgId);
        const merchant = await requireVisibleMerchant(db, issuerId, p.merchantId);
        const [offers, activation] = await Promise.all([
          db.offer.findMany({ where: { merchantId: merchant.id }, orderBy: [{ startsAt: 'asc' }, { id: 'asc' }] }),
          readActivation(db, { issuerId, chgId: group.id, merchantId: merchant.id }),
        ]);
        const at = query.at ? new Date(query.at) : clock.now();
        const decision = evaluateEarn({
          merchant: { id: merchant.id, status: merchant.status as CatalogueStatus },
          offers: offers.map(toEarnOffer),
          activation: activation && { status: activation.status as CatalogueStatus, activatedAt: activation.activatedAt },
          groupStatus: group.status as CatalogueStatus,
          transaction: query.amountMinor === undefined ? undefined : { amountMinor: query.amountMinor, mcc: query.mcc, currency: REWARD_CURRENCY, at },
          // Earned-so-far per offer comes from reward events, which arrive with the ledger;
          // until then no group has earned anything, so per-group caps are untouched.
          earnedSoFarByOffer: {},
          now: at,
        });
        ctx.body = {
          merchantId: merchant.id,
          eligible: decision.eligible,
          reasons: decision.reasons,
          eligibleOfferIds: decision.eligibleOfferIds,
          ...(decision.winningOfferId ? { winningOfferId: decision.winningOfferId, estimatedRewardMinor: decision.estimatedRewardMinor } : {}),
          evaluatedAt: decision.at.toISOString(),
        };
      },
    }),
    defineRoute<unknown, { amountMinor?: number }>({
      method: 'get',
      path: '/api/v2/chg/{chgId}/merchant/{merchantId}/spend-eligibility',
      operationId: 'getSpendEligibility',
      summary: 'Could branded balance be spent at this merchant now?',
      description: 'Balances in usd minor units. Pending balance waits for the longer of the issuer and merchant availability delays.',
      tag,
      auth: 'issuer',
      params,
      query: spendQuerySchema,
      responses: { 200: { description: 'The decision.', schema: spendEligibilitySchema } },
      errorStatuses: [404],
      async handle(ctx, { params: p, query }) {
        const issuer = issuerOf(ctx);
        const group = await requireGroup(db, issuer.id, p.chgId);
        const merchant = await requireVisibleMerchant(db, issuer.id, p.merchantId);
        const decision = evaluateSpend({
          merchant: {
            status: merchant.status as CatalogueStatus,
            brandedEnabled: merchant.brandedEnabled,
            spendMinimumMinor: fromDbMinor(merchant.brandedSpendMinimumMinor),
            availabilityDelayDays: merchant.brandedAvailabilityDelayDays,
          },
          groupStatus: group.status as CatalogueStatus,
          grants: await loadBrandedGrants(db, issuer.id, group.id, merchant.id, clock.now()),
          issuerDelayDays: issuer.brandedAvailabilityDelayDays,
          amountMinor: query.amountMinor,
          at: clock.now(),
        });
        ctx.body = { merchantId: merchant.id, currency: REWARD_CURRENCY, ...decision };
      },
    }),
  ];
}
