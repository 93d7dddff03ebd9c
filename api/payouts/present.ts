// Payouts as the issuer reads them (API.md, "Cashback that is paid out").
import type { Payout } from '../../prisma/generated/client';
import { fromDbMinor } from '../../core/ledger';

export function presentPayout(p: Payout) {
  return {
    id: p.id,
    kind: p.kind as 'run' | 'group',
    status: p.status as 'processing' | 'completed' | 'failed',
    minimumMinor: fromDbMinor(p.minimumMinor),
    // Stored as [] when the run covers every group: the issuer sees null, as it sent nothing.
    chgIds: p.chgIds.length > 0 ? p.chgIds : null,
    description: p.description,
    asOf: p.asOf.toISOString(),
    groupCount: p.groupCount,
    currency: 'usd' as const,
    totalMinor: fromDbMinor(p.totalMinor),
    ...(p.failureReason ? { failureReason: p.failureReason } : {}),
    createdAt: p.createdAt.toISOString(),
    completedAt: p.completedAt ? p.completedAt.toISOString() : null,
  };
}
