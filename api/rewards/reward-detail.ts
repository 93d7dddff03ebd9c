// Reward detail of settled transactions (SPEC.md 2.2), computed from the stored event and
// the reward events tied to it, for one or many transactions with a fixed number of queries.
import type { Db } from '../../prisma/client';
import type { IngestedEvent } from '../../prisma/generated/client';
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

export async function rewardDetails(db: Db, events: IngestedEvent[]): Promise<RewardDetail[]> {
  if (events.length === 0) return [];
  const ids = events.map((e) => e.id);
  const rewardEvents = await db.rewardEvent.findMany({
    where: { issuerId: events[0].issuerId, OR: [{ transactionId: { in: ids } }, { sourceEventId: { in: ids } }] },
    orderBy: [{ occurredAt: 'asc' }, { id: 'asc' }],
    select: { id: true, type: true, amountMinor: true, transactionId: true, sourceEventId: true },
  });
  return events.map((event) => {
    const isRefund = event.state === 'refunded';
    // A purchase owns its earnings, spends and the clawbacks of its refunds; a refund shows
    // the clawbacks it caused.
    const mine = rewardEvents.filter((r) => (isRefund ? r.sourceEventId === event.id : r.transactionId === event.id));
    const sum = (types: Set<string>) => mine.filter((r) => types.has(r.type)).reduce((s, r) => s + fromDbMinor(r.amountMinor), 0);
    const detail: RewardDetail = {
      transactionId: event.id,
      status: publicStatus(event.rewardStatus),
      earnedAmountMinor: isRefund ? 0 : sum(EARNED),
      spentAmountMinor: isRefund ? 0 : sum(new Set(['branded_spent'])),
      clawedBackAmountMinor: sum(CLAWED),
      rewardEventIds: mine.map((r) => r.id),
    };
    if (event.merchantId && detail.status !== 'pending') detail.merchantId = event.merchantId;
    if (mine.length > 0) detail.currency = 'usd';
    return detail;
  });
}
