// How many of a group's purchases keep a reward from each of a merchant's offers that limits
// redemptions (maxRedemptionsPerChg), as a JSON object by offer id, for the one statement that
// reads a purchase's context. A purchase counts while what it earned from the offer exceeds what
// refunds clawed back of it: one refunded in full gives its place back with its reward. Read
// under the group's account locks (the settlement's), so two purchases of a group never both take
// the last place. Only offers with a limit are counted: the others cost one index probe.
import { Prisma } from '../../prisma/generated/client';

export function redeemedByOfferJson(p: {
  issuerId: string;
  chgId: string;
  merchantId: string;
  /** A purchase left out (a claim asks what the purchase itself would earn). */
  exceptTransactionId?: string;
}): Prisma.Sql {
  const except = p.exceptTransactionId ? Prisma.sql`AND e.transaction_id <> ${p.exceptTransactionId}` : Prisma.empty;
  return Prisma.sql`(SELECT coalesce(jsonb_object_agg(k.offer_id, k.n), '{}'::jsonb) FROM (
      SELECT kept.offer_id, count(*)::int AS n FROM (
        SELECT e.offer_id FROM reward_event e
         WHERE e.issuer_id = ${p.issuerId} AND e.chg_id = ${p.chgId}
           AND e.offer_id IN (SELECT o.id FROM offer o WHERE o.merchant_id = ${p.merchantId} AND o.max_redemptions_per_chg IS NOT NULL)
           AND e.transaction_id IS NOT NULL ${except}
           AND e.type IN ('cashback_earned', 'branded_earned', 'cashback_clawed_back', 'branded_clawed_back')
         GROUP BY e.offer_id, e.transaction_id
        HAVING sum(CASE WHEN e.type IN ('cashback_earned', 'branded_earned') THEN e.amount_minor ELSE -e.amount_minor END) > 0) kept
      GROUP BY kept.offer_id) k)`;
}
