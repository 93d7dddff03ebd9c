// A group's progress on cumulative offers as stored (migration 20261203170000_offer_progress):
// read for a purchase's decision, written by the settlement in its one statement and by refunds.
// Every writer holds the group's cashback account lock first (the settlement locks the purchase's
// accounts before it reads; a refund that moves progress locks them too), so what a step reads is
// what it overwrites: the rows hold absolute values, never increments that could double.
import { Prisma } from '../../prisma/generated/client';
import { fromDbMinor } from '../ledger';
import type { ProgressStep, StoredProgress } from '../rules/progress';
import type { SqlTx } from '../../prisma/sql-transaction';

export const CUMULATIVE_KINDS = ['spend_x_get_y', 'nth_purchase'] as const;
const kinds = Prisma.sql`ARRAY['spend_x_get_y', 'nth_purchase']::text[]`;

/** The group's progress on the merchant's cumulative offers, as a JSON object by offer id. */
export function progressByOfferJson(p: { chgId: string; merchantId: string }): Prisma.Sql {
  return Prisma.sql`(SELECT coalesce(jsonb_object_agg(pr.offer_id, jsonb_build_object('measure', pr.measure::text, 'rewarded', pr.rewarded)), '{}'::jsonb)
      FROM offer_progress pr
     WHERE pr.chg_id = ${p.chgId}
       AND pr.offer_id IN (SELECT o.id FROM offer o WHERE o.merchant_id = ${p.merchantId} AND o.reward ->> 'kind' = ANY(${kinds})))`;
}

/** The settlement's writes of the steps it took, as CTEs of its one statement. */
export function progressWriteCtes(
  steps: readonly ProgressStep[],
  p: { issuerId: string; chgId: string; transactionId: string; at: Date },
): Prisma.Sql[] {
  const moved = steps.filter((s) => s.contribution > 0 || s.completions.length > 0);
  if (moved.length === 0) return [];
  const ids = moved.map((s) => s.offerId);
  return [
    Prisma.sql`progress_written AS (
      INSERT INTO offer_progress (offer_id, chg_id, issuer_id, measure, rewarded, updated_at)
      SELECT x.offer, ${p.chgId}, ${p.issuerId}, x.measure, x.rewarded, ${p.at}
        FROM unnest(${ids}::text[], ${moved.map((s) => String(s.after.measure))}::text[]::bigint[], ${moved.map((s) => String(s.after.rewarded))}::text[]::int[])
             AS x(offer, measure, rewarded)
      ON CONFLICT (offer_id, chg_id) DO UPDATE SET measure = EXCLUDED.measure, rewarded = EXCLUDED.rewarded, updated_at = EXCLUDED.updated_at)`,
    Prisma.sql`contributions_written AS (
      INSERT INTO offer_contribution (transaction_id, offer_id, issuer_id, chg_id, contributed, created_at, updated_at)
      SELECT ${p.transactionId}, x.offer, ${p.issuerId}, ${p.chgId}, x.contributed, ${p.at}, ${p.at}
        FROM unnest(${ids}::text[], ${moved.map((s) => String(s.contribution))}::text[]::bigint[]) AS x(offer, contributed))`,
  ];
}

export interface Contribution {
  offerId: string;
  contributed: number;
}

/** What a purchase adds to each cumulative offer's measure now (those it still adds to). */
export async function contributionsOf(tx: SqlTx, transactionId: string): Promise<Contribution[]> {
  const rows = await tx.$queryRaw<Array<{ offerId: string; contributed: bigint }>>`
    SELECT offer_id AS "offerId", contributed FROM offer_contribution
     WHERE transaction_id = ${transactionId} AND contributed > 0 ORDER BY offer_id`;
  return rows.map((r) => ({ offerId: r.offerId, contributed: fromDbMinor(r.contributed) }));
}

/** The group's progress on one offer, under the lock the caller holds (the group's accounts). */
export async function storedProgress(tx: SqlTx, offerId: string, chgId: string): Promise<StoredProgress> {
  const [row] = await tx.$queryRaw<Array<{ measure: bigint; rewarded: number }>>`
    SELECT measure, rewarded FROM offer_progress WHERE offer_id = ${offerId} AND chg_id = ${chgId} FOR UPDATE`;
  return row ? { measure: fromDbMinor(row.measure), rewarded: row.rewarded } : { measure: 0, rewarded: 0 };
}

/** A refund's writes: the purchase's lower contribution and the group's progress after it. */
export async function writeRefundProgress(
  tx: SqlTx,
  p: {
    offerId: string;
    chgId: string;
    transactionId: string;
    contributedAfter: number;
    after: StoredProgress;
    at: Date;
  },
): Promise<void> {
  await tx.$executeRaw`
    UPDATE offer_contribution SET contributed = ${p.contributedAfter}, updated_at = ${p.at}
     WHERE transaction_id = ${p.transactionId} AND offer_id = ${p.offerId}`;
  await tx.$executeRaw`
    UPDATE offer_progress SET measure = ${p.after.measure}, rewarded = ${p.after.rewarded}, updated_at = ${p.at}
     WHERE offer_id = ${p.offerId} AND chg_id = ${p.chgId}`;
}
