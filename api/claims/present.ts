// A claim as the API shows it: absent optional fields left out, amounts as numbers. The
// operator's view adds who resolved it.
import type { Claim } from '../../prisma/generated/client';
import { fromDbMinor } from '../../core/ledger';

export function presentClaim(c: Claim) {
  return {
    id: c.id,
    chgId: c.chgId,
    ...(c.transactionId ? { transactionId: c.transactionId } : {}),
    ...(c.externalId ? { externalId: c.externalId } : {}),
    reason: c.reason,
    ...(c.merchantId ? { merchantId: c.merchantId } : {}),
    ...(c.note !== null ? { note: c.note } : {}),
    status: c.status,
    ...(c.reasonCode ? { reasonCode: c.reasonCode } : {}),
    ...(c.status === 'needs_review' && c.computedCashbackMinor !== null
      ? {
          computedReward: {
            cashbackMinor: fromDbMinor(c.computedCashbackMinor),
            brandedMinor: fromDbMinor(c.computedBrandedMinor ?? 0n),
          },
        }
      : {}),
    ...(c.evidence !== null ? { evidence: c.evidence as Record<string, unknown> } : {}),
    adjustmentIds: c.adjustmentIds,
    ...(c.resolutionNote !== null ? { resolutionNote: c.resolutionNote } : {}),
    ...(c.resolvedAt ? { resolvedAt: c.resolvedAt.toISOString() } : {}),
    workflowId: c.workflowId,
    createdAt: c.createdAt.toISOString(),
    updatedAt: c.updatedAt.toISOString(),
  };
}

export function presentClaimForOperator(c: Claim) {
  return { ...presentClaim(c), issuerId: c.issuerId, ...(c.resolvedBy ? { resolvedBy: c.resolvedBy } : {}) };
}
