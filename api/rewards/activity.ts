// The activity feed: the group's reward events, newest first (occurredAt, then id, both
// descending), keyset-paginated so pages neither repeat nor skip rows while new ones arrive.
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';
import { fromDbMinor } from '../../core/ledger';
import { cursorDate, decodeCursor, toPage } from '../pagination';

export interface ActivityQuery {
  limit: number;
  cursor?: string;
  type?: string;
}

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

export async function activityPage(db: Db, issuerId: string, chgId: string, query: ActivityQuery) {
  const after = decodeCursor(query.cursor, 2);
  const where: Prisma.RewardEventWhereInput = { issuerId, chgId, ...(query.type ? { type: query.type } : {}) };
  if (after) {
    const occurredAt = cursorDate(after[0]);
    const id = String(after[1]);
    where.OR = [{ occurredAt: { lt: occurredAt } }, { occurredAt, id: { lt: id } }];
  }
  const rows = await db.rewardEvent.findMany({ where, orderBy: [{ occurredAt: 'desc' }, { id: 'desc' }], take: query.limit + 1 });
  const page = toPage(rows, query.limit, (r) => [r.occurredAt.toISOString(), r.id]);
  const merchantIds = [...new Set(page.data.map((r) => r.merchantId).filter((m): m is string => m !== null))];
  const merchants = merchantIds.length > 0 ? await db.merchant.findMany({ where: { id: { in: merchantIds } }, select: { id: true, name: true } }) : [];
  const names = new Map(merchants.map((m) => [m.id, m.name]));
  const data: ActivityRow[] = page.data.map((r) => ({
    id: r.id,
    type: r.type,
    amountMinor: fromDbMinor(r.amountMinor),
    currency: 'usd',
    ...(r.merchantId ? { merchantId: r.merchantId, ...(names.has(r.merchantId) ? { merchantName: names.get(r.merchantId)! } : {}) } : {}),
    ...(r.transactionId ? { transactionId: r.transactionId } : {}),
    ...(r.rewardGrantId ? { rewardGrantId: r.rewardGrantId } : {}),
    occurredAt: r.occurredAt.toISOString(),
    description: r.description,
  }));
  return { data, nextCursor: page.nextCursor };
}
