// Group-level reconciliation (API.md, Rewards and reconciliation): the rewards summary, the
// activity feed, grants about to expire and the balance at one merchant. All are scoped to
// the calling issuer and the group; another issuer's group, or a merchant the issuer cannot
// see, answers 404 like a missing one (existence never leaks).
import { fromBody, fromPath, linksTo } from '../links';
import { defineRoute, type RouteSpec } from '../route';
import { issuerOf } from '../middleware/auth';
import type { AppDeps } from '../deps';
import { groupNotFound } from '../catalogue/scope';
import { loadGroupMerchant } from '../catalogue/group-merchant';
import { fromDbMinor } from '../../core/ledger';
import { rewardsSummary } from './summary';
import { BRANDED_IDENTITIES, CASHBACK_IDENTITIES, identityText } from './identities';
import { activityPage } from './activity';
import {
  activityPageSchema,
  activityQuerySchema,
  expiringQuerySchema,
  expiringSchema,
  merchantBalanceSchema,
  summarySchema,
} from './schemas';
import { issuerNow } from '../sandbox/issuer-clock';

const DAY_MS = 86_400_000;
/** The expiring list and a merchant's grant list are not paginated; this bounds them. */
export const MAX_LISTED_GRANTS = 500;

const tag = 'Rewards';

export function balanceRoutes(deps: AppDeps): RouteSpec[] {
  return [
    getRewardsSummaryRoute(deps),
    listRewardsActivityRoute(deps),
    listExpiringRewardsRoute(deps),
    getMerchantBalanceRoute(deps),
  ];
}

function getRewardsSummaryRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/rewards/summary',
    operationId: 'getRewardsSummary',
    summary: 'Cashback and branded balance totals of a group, from the ledger',
    description:
      'Flows (earned, spent, expired, clawed back) are sums of the ledger transfers (one reward event each); balanceMinor is the ' +
      'chg_cashback account; availableMinor + notYetAvailableMinor is the chg_branded accounts split by grant availability. ' +
      `Cashback: ${CASHBACK_IDENTITIES.map(identityText).join('; ')}. Branded balance: ${BRANDED_IDENTITIES.map(identityText).join('; ')}. ` +
      'cashback.pendingMinor is the cashback previewed on authorizations that have not settled yet (not reversed, not lapsed): ' +
      'expected, not owed, not in the ledger and not in balanceMinor. expiredMinor includes value past its expiry that the hourly ' +
      'expiry job has not yet moved to breakage.',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    responses: { 200: { description: 'The summary.', schema: summarySchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p }) {
      // One statement, the group's ownership included: undefined means not this issuer's.
      const summary = await rewardsSummary(db, issuerOf(ctx).id, p.chgId, issuerNow(ctx, clock));
      if (!summary) throw groupNotFound(p.chgId);
      ctx.body = summary;
    },
  });
}

function listRewardsActivityRoute(deps: AppDeps): RouteSpec {
  const { db } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/rewards/activity',
    operationId: 'listRewardsActivity',
    summary: 'Reward events of a group, newest first',
    description:
      'Ordered by occurredAt, then id, both descending; every reward event type, or only `type`. Cursor paginated.',
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    query: activityQuerySchema,
    responses: {
      200: {
        description: 'One page of activity.',
        schema: activityPageSchema,
        links: linksTo(['getTransactionRewardDetail', 'getTransactionMatchTrace', 'getTransactionLedgerEntries'], {
          chgId: fromPath('chgId'),
          txnId: fromBody('/data/0/transactionId'),
        }),
      },
    },
    errorStatuses: [404],
    async handle(ctx, { params: p, query }) {
      const page = await activityPage(db, issuerOf(ctx).id, p.chgId, query);
      if (!page) throw groupNotFound(p.chgId);
      ctx.body = page;
    },
  });
}

function listExpiringRewardsRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/rewards/expiring',
    operationId: 'listExpiringRewards',
    summary: 'Branded balance grants that expire within withinDays (1..365, default 30), soonest first',
    description: `Grants that still hold value and have not expired yet; at most ${MAX_LISTED_GRANTS}.`,
    tag,
    auth: 'issuer',
    params: { chgId: 'chg' },
    query: expiringQuerySchema,
    responses: { 200: { description: 'The grants.', schema: expiringSchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p, query }) {
      const now = issuerNow(ctx, clock);
      // One statement, the group's ownership included (no row: not this issuer's group).
      const rows = await db.$queryRaw<
        Array<{ id: string | null; merchantId: string; remainingMinor: bigint; expiresAt: Date }>
      >`
        SELECT x.id, x.merchant_id AS "merchantId", x.remaining_minor AS "remainingMinor", x.expires_at AS "expiresAt"
          FROM cardholder_group g
          LEFT JOIN LATERAL (
            SELECT id, merchant_id, remaining_minor, expires_at, created_at FROM reward_grant
             WHERE issuer_id = g.issuer_id AND chg_id = g.id AND remaining_minor > 0
               AND expires_at > ${now} AND expires_at <= ${new Date(now.getTime() + query.withinDays * DAY_MS)}
             ORDER BY expires_at, created_at, id LIMIT ${MAX_LISTED_GRANTS}) x ON true
         WHERE g.id = ${p.chgId} AND g.issuer_id = ${issuerOf(ctx).id}
         ORDER BY x.expires_at, x.created_at, x.id`;
      if (rows.length === 0) throw groupNotFound(p.chgId);
      ctx.body = {
        data: rows
          .filter((g) => g.id !== null)
          .map((g) => ({
            rewardGrantId: g.id!,
            merchantId: g.merchantId,
            remainingMinor: fromDbMinor(g.remainingMinor),
            expiresAt: g.expiresAt.toISOString(),
          })),
      };
    },
  });
}

function getMerchantBalanceRoute(deps: AppDeps): RouteSpec {
  const { db, clock } = deps;
  return defineRoute({
    method: 'get',
    path: '/api/v2/chg/{chgId}/merchant/{merchantId}/balance',
    operationId: 'getMerchantBalance',
    summary: "The group's branded balance at one merchant, with its grants in spending order",
    description:
      'Grants that still hold value and have not expired, FIFO by expiry (the order they are spent in); at most ' +
      `${MAX_LISTED_GRANTS} listed, the totals cover all. expiringWithin30DaysMinor counts available and not-yet-available value.`,
    tag,
    auth: 'issuer',
    params: { chgId: 'chg', merchantId: 'mp' },
    responses: { 200: { description: 'The balance.', schema: merchantBalanceSchema } },
    errorStatuses: [404],
    async handle(ctx, { params: p }) {
      const { balance, grants } = await loadGroupMerchant(db, issuerOf(ctx), p.chgId, p.merchantId, {
        grants: { at: issuerNow(ctx, clock), limit: MAX_LISTED_GRANTS },
      });
      ctx.body = {
        merchantId: p.merchantId,
        currency: 'usd',
        ...balance,
        grants: grants.map((g) => ({
          rewardGrantId: g.id,
          remainingMinor: g.remainingMinor,
          availableAt: g.availableAt.toISOString(),
          expiresAt: g.expiresAt.toISOString(),
        })),
      };
    },
  });
}
