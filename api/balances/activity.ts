// The activity feed: the group's reward events, newest first (occurredAt, then id, both
// descending), keyset-paginated so pages neither repeat nor skip rows while new ones arrive.
import type { Db } from '../../prisma/client';
import { Prisma } from '../../prisma/generated/client';
import { fromDbMinor } from '../../core/ledger';
import { cursorDate, decodeCursor, toPage } from '../pagination';
import type { ActivityQuery } from './schemas';

export interface ActivityRow {
  id: string;
  type: string;
  amountMinor: number;
  currency: 'usd';
  merchantId?: string;
  merchantName?: string;
  transactionId?: string;
  rewardGrantId?: string;
  occurredAt: string;
  description: string;
}

interface ActivityDbRow {
  id: string;
  type: string;
  amountMinor: bigint;
  merchantId: string | null;
  merchantName: string | null;
  transactionId: string | null;
  rewardGrantId: string | null;
  occurredAt: Date;
  description: string;
}

/**
 * One page in ONE statement, the group's ownership and the merchants' names included;
 * undefined when the group is not the issuer's (the caller answers 404).
 */
export async function activityPage(db: Db, issuerId: string, chgId: string, query: ActivityQuery) {
  const after = decodeCursor(query.cursor, 2);
  const keyset = after
    ? Prisma.sql`AND (r.occurred_at, r.id) < (${cursorDate(after[0])}, ${String(after[1])})`
    : Prisma.empty;
  // No row: not the issuer's group. One row of NULLs: the group has no events (yet).
  const rows = await db.$queryRaw<Array<ActivityDbRow | { [K in keyof ActivityDbRow]: null }>>`
    SELECT r.id, r.type, r.amount_minor AS "amountMinor", r.merchant_id AS "merchantId", m.name AS "merchantName",
           r.transaction_id AS "transactionId", r.reward_grant_id AS "rewardGrantId", r.occurred_at AS "occurredAt", r.description
      FROM cardholder_group g
      LEFT JOIN LATERAL (
        SELECT * FROM reward_event r
         WHERE r.issuer_id = g.issuer_id AND r.chg_id = g.id ${query.type ? Prisma.sql`AND r.type = ${query.type}` : Prisma.empty} ${keyset}
         ORDER BY r.occurred_at DESC, r.id DESC
         LIMIT ${query.limit + 1}) r ON true
      LEFT JOIN merchant m ON m.id = r.merchant_id
     WHERE g.id = ${chgId} AND g.issuer_id = ${issuerId}
     ORDER BY r.occurred_at DESC, r.id DESC`;
  if (rows.length === 0) return undefined;
  const events = rows.filter((r): r is ActivityDbRow => r.id !== null);
  const page = toPage(events, query.limit, (r) => [r.occurredAt.toISOString(), r.id]);
  const data: ActivityRow[] = page.data.map((r) => ({
    id: r.id,
    type: r.type,
    amountMinor: fromDbMinor(r.amountMinor),
    currency: 'usd',
    ...(r.merchantId ? { merchantId: r.merchantId, ...(r.merchantName ? { merchantName: r.merchantName } : {}) } : {}),
    ...(r.transactionId ? { transactionId: r.transactionId } : {}),
    ...(r.rewardGrantId ? { rewardGrantId: r.rewardGrantId } : {}),
    occurredAt: r.occurredAt.toISOString(),
    description: r.description,
  }));
  return { data, nextCursor: page.nextCursor };
}
