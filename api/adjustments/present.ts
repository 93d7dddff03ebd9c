// An adjustment as the API shows it: absent optional fields are left out, not null.
import type { Adjustment } from '../../core/domain/adjustments';

export function presentAdjustment(a: Adjustment) {
  return {
    id: a.id,
    chgId: a.chgId,
    balanceType: a.balanceType,
    amountMinor: a.amountMinor,
    currency: 'usd' as const,
    ...(a.merchantId ? { merchantId: a.merchantId } : {}),
    reasonCode: a.reasonCode,
    ...(a.note !== null ? { note: a.note } : {}),
    ...(a.transactionId ? { transactionId: a.transactionId } : {}),
    ...(a.claimId ? { claimId: a.claimId } : {}),
    rewardEventId: a.rewardEventId,
    ...(a.rewardGrantId ? { rewardGrantId: a.rewardGrantId } : {}),
    transferId: a.transferId,
    createdAt: a.createdAt.toISOString(),
  };
}
