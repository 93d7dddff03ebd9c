// Reward detail of settled transactions (SPEC.md 2.2), computed from the stored event and
// the reward events tied to it: one statement for one transaction or a hundred, the group's
// ownership check included, so reward-detail and reward-overviews cost one round trip.
import type { Db } from '../../prisma/client';
import { fromDbMinor } from '../../core/ledger';

export type RewardStatus = 'matched' | 'not_matched' | 'pending' | 'reversed' | 'unknown';

export interface RewardDetail {
  transactionId: string;
  status: RewardStatus;
  merchantId?: string;
  earnedAmountMinor: number;
  spentAmountMinor: number;
  clawedBackAmountMinor: number;
  currency?: 'usd';
  rewardEventIds: string[];
}

const EARNED = new Set(['cashback_earned', 'branded_earned']);
const CLAWED = new Set(['cashback_clawed_back', 'branded_clawed_back']);

function publicStatus(stored: string): RewardStatus {
  return stored === 'matched' || stored === 'not_matched' || stored === 'reversed' || stored === 'unknown' ? stored : 'pending';
}

interface DetailRow {
  id: string | null;
  externalId: string | null;
  state: string;
  rewardStatus: string;
  merchantId: string | null;
  events: Array<{ id: string; type: string; amountMinor: string }>;
}

export interface FoundDetails {
  /** The group exists and is the issuer's (when false, nothing else was looked at). */
  groupFound: boolean;
  details: Array<RewardDetail & { externalId: string }>;
}

/**
 * The settled transactions of the issuer's group named by our ids or the issuer's, with
 * their details. A purchase owns its earnings, spends and the clawbacks of its refunds; a
 * refund shows the clawbacks it caused.
 */
export async function findRewardDetails(db: Db, issuerId: string, chgId: string, ids: { transactionIds?: string[]; externalIds?: string[] }): Promise<FoundDetails> {
  const rows = await db.$queryRaw<DetailRow[]>`
    SELECT e.id, e.external_id AS "externalId", e.state, e.reward_status AS "rewardStatus", e.merchant_id AS "merchantId",
           (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'type', r.type, 'amountMinor', r.amount_minor::text) ORDER BY r.occurred_at, r.id), '[]'::jsonb)
              FROM reward_event r
             WHERE r.issuer_id = e.issuer_id
               AND ((e.state <> 'refunded' AND r.transaction_id = e.id) OR (e.state = 'refunded' AND r.source_event_id = e.id))) AS events
      FROM cardholder_group g
      LEFT JOIN ingested_event e
        ON e.issuer_id = g.issuer_id AND e.chg_id = g.id AND e.kind = 'settled'
       AND (e.id = ANY(${ids.transactionIds ?? []}::text[]) OR e.external_id = ANY(${ids.externalIds ?? []}::text[]))
     WHERE g.id = ${chgId} AND g.issuer_id = ${issuerId}`;
  if (rows.length === 0) return { groupFound: false, details: [] };
  return { groupFound: true, details: rows.filter((r) => r.id !== null).map(toDetail) };
}

function toDetail(row: DetailRow): RewardDetail & { externalId: string } {
  const isRefund = row.state === 'refunded';
  const sum = (types: Set<string>) => row.events.filter((r) => types.has(r.type)).reduce((s, r) => s + fromDbMinor(r.amountMinor), 0);
  const detail: RewardDetail & { externalId: string } = {
    transactionId: row.id!,
    status: publicStatus(row.rewardStatus),
    earnedAmountMinor: isRefund ? 0 : sum(EARNED),
    spentAmountMinor: isRefund ? 0 : sum(new Set(['branded_spent'])),
    clawedBackAmountMinor: sum(CLAWED),
    rewardEventIds: row.events.map((r) => r.id),
    externalId: row.externalId!,
  };
  if (row.merchantId && detail.status !== 'pending') detail.merchantId = row.merchantId;
  if (row.events.length > 0) detail.currency = 'usd';
  return detail;
}

/** The public object: the issuer's external id is how overviews look it up, not part of it. */
export function publicDetail({ externalId: _externalId, ...detail }: RewardDetail & { externalId: string }): RewardDetail {
  return detail;
}
