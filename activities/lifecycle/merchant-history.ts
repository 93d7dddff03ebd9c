// The group's history at the merchant (migration 20261203100000), moved by the settlement of each
// purchase in the settlement's own statement: the ranked offer list reads it (core/rules/relevance.ts).
// Every purchase the service identified a merchant for counts, rewarded or not, in the reward
// currency only (a sum of amounts in several currencies would mean nothing).
// Each change adds exactly one purchase to one row and no row is ever removed: the sum of a group's
// purchases then changes with every change, which is how a ranked list knows the history it keeps
// is still the group's (api/catalogue/kept-rankings.ts).
import { Prisma } from '../../prisma/generated/client';
import { REWARD_CURRENCY } from '../../core/rules/eligibility';
import { fromDbMinor } from '../../core/ledger';
import type { DecisionContext } from './context';

/** The CTE adding the purchase to the group's row for its merchant; none when it has no merchant. */
export function merchantHistoryCte(ctx: DecisionContext): Prisma.Sql | undefined {
  const { event, merchant } = ctx;
  if (!merchant || event.currency !== REWARD_CURRENCY) return undefined;
  return Prisma.sql`merchant_history AS (
    INSERT INTO chg_merchant_history AS h (chg_id, merchant_id, issuer_id, purchases, spend_minor, last_purchase_at)
    VALUES (${event.chgId}, ${merchant.id}, ${event.issuerId}, 1, ${fromDbMinor(event.amountMinor)}::bigint, ${ctx.asOf}::timestamptz)
    ON CONFLICT (chg_id, merchant_id) DO UPDATE
       SET purchases = h.purchases + 1,
           spend_minor = h.spend_minor + EXCLUDED.spend_minor,
           last_purchase_at = greatest(h.last_purchase_at, EXCLUDED.last_purchase_at))`;
}
