// Reward detail of settled transactions (SPEC.md 2.2), computed from the stored event and
// the reward events tied to it: one statement for one transaction or a hundred, the group's
// ownership check included, so reward-detail and reward-overviews cost one round trip.
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
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
  return stored === 'matched' || stored === 'not_matched' || stored === 'reversed' || stored === 'unknown'
    ? stored
    : 'pending';
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
 * A purchase owns its earnings, spends and the clawbacks of its refunds; a refund shows the
 * clawbacks it caused. Each branch finds the reward events by the event's id alone (OFFSET 0
 * keeps the issuer check out of the index choice, as for the event itself below).
 */
const rewardEventsOfE = (column: string, when: string) => `
  (SELECT coalesce(jsonb_agg(jsonb_build_object('id', r.id, 'type', r.type, 'amountMinor', r.amount_minor::text) ORDER BY r.occurred_at, r.id), '[]'::jsonb)
     FROM (SELECT id, type, amount_minor, occurred_at, issuer_id FROM reward_event WHERE ${column} = e.id AND ${when} OFFSET 0) r
    WHERE r.issuer_id = e.issuer_id)`;
const EVENTS_OF_E = `${rewardEventsOfE('transaction_id', "e.state <> 'refunded'")}
  || ${rewardEventsOfE('source_event_id', "e.state = 'refunded'")}`;

const COLUMNS = `e.id, e.external_id AS "externalId", e.state, e.reward_status AS "rewardStatus", e.merchant_id AS "merchantId", ${EVENTS_OF_E} AS events`;

// $1 issuer, $2 group, $3 transaction. The event's own issuer and group are the ownership
// check; only when it is missing does the caller look at the group, to say which 404 it is.
// The event is found by its primary key alone, in a subquery OFFSET 0 keeps apart: given the
// issuer and kind beside the id, the generic plan of the prepared statement chose the
// (issuer, kind, external id) index on a table without fresh statistics, and read every
// settled event of the issuer for each request (test/api/hot-plans.test.ts).
export const REWARD_DETAIL: HotStatement = {
  name: 'reward_detail_v3',
  text: `SELECT ${COLUMNS} FROM (SELECT * FROM ingested_event WHERE id = $3 OFFSET 0) e
          WHERE e.issuer_id = $1 AND e.chg_id = $2 AND e.kind = 'settled'`,
};

const GROUP: HotStatement = {
  name: 'group_exists_v1',
  text: `SELECT 1 FROM cardholder_group WHERE id = $2 AND issuer_id = $1`,
};

// Events named by our id are found by primary key alone (OFFSET 0, as above); those named by
// the issuer's id through the (issuer, kind, external id) index, which that lookup fills.
export const REWARD_OVERVIEWS: HotStatement = {
  name: 'reward_overviews_v2',
  text: `SELECT ${COLUMNS} FROM cardholder_group g
           LEFT JOIN LATERAL (
             SELECT id, issuer_id, external_id, state, reward_status, merchant_id
               FROM (SELECT * FROM ingested_event WHERE id = ANY($3::text[]) OFFSET 0) byId
              WHERE issuer_id = g.issuer_id AND chg_id = g.id AND kind = 'settled'
             UNION
             SELECT id, issuer_id, external_id, state, reward_status, merchant_id FROM ingested_event
              WHERE issuer_id = g.issuer_id AND chg_id = g.id AND kind = 'settled' AND external_id = ANY($4::text[])) e ON true
          WHERE g.id = $2 AND g.issuer_id = $1`,
};

/** One settled transaction of the issuer's group: one statement when it exists. */
export async function findRewardDetail(
  db: Db,
  issuerId: string,
  chgId: string,
  transactionId: string,
): Promise<FoundDetails> {
  const rows = await hotQuery<DetailRow>(db, REWARD_DETAIL, [issuerId, chgId, transactionId]);
  if (rows.length > 0) return found(rows);
  return { groupFound: (await hotQuery(db, GROUP, [issuerId, chgId])).length > 0, details: [] };
}

/** The settled transactions of the issuer's group named by our ids or the issuer's, in one statement. */
export async function findRewardDetails(
  db: Db,
  issuerId: string,
  chgId: string,
  ids: { transactionIds?: string[]; externalIds?: string[] },
): Promise<FoundDetails> {
  return found(
    await hotQuery<DetailRow>(db, REWARD_OVERVIEWS, [issuerId, chgId, ids.transactionIds ?? [], ids.externalIds ?? []]),
  );
}

function found(rows: DetailRow[]): FoundDetails {
  if (rows.length === 0) return { groupFound: false, details: [] };
  return { groupFound: true, details: rows.filter((r) => r.id !== null).map(toDetail) };
}

function toDetail(row: DetailRow): RewardDetail & { externalId: string } {
  const isRefund = row.state === 'refunded';
  const sum = (types: Set<string>) =>
    row.events.filter((r) => types.has(r.type)).reduce((s, r) => s + fromDbMinor(r.amountMinor), 0);
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
export function publicDetail({
  externalId: _externalId,
  ...detail
}: RewardDetail & { externalId: string }): RewardDetail {
  return detail;
}
