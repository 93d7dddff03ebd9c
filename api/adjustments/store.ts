// Reads and writes of adjustments for the issuer routes: the posting itself is
// core/domain/adjustments.ts, shared with a claim's approval.
import { errors } from '../../core/errors';
import { exceedsAdjustmentLimit } from '../../core/rules/adjustments';
import { postAdjustment, toAdjustment, type Adjustment } from '../../core/domain/adjustments';
import { inTransaction } from '../../core/domain/ledger';
import { fromDbMinor } from '../../core/ledger';
import type { Db } from '../../prisma/client';
import { createdAtKey, createdAtKeyset, toPage } from '../pagination';
import { requireGroup } from '../catalogue/scope';
import { presentAdjustment } from './present';
import type { AdjustmentInput, AdjustmentListQuery } from './schemas';

export async function createAdjustment(
  db: Db,
  caller: { issuerId: string; tokenId: string },
  chgId: string,
  input: AdjustmentInput,
  idempotencyKey: string,
  at: { issuer: Date; real: Date },
): Promise<{ adjustment: Adjustment; created: boolean }> {
  return inTransaction(db, async (tx) => {
    const issuer = await tx.issuer.findUniqueOrThrow({
      where: { id: caller.issuerId },
      select: { adjustmentLimitMinor: true },
    });
    const tooLarge = exceedsAdjustmentLimit(input.amountMinor, fromDbMinor(issuer.adjustmentLimitMinor));
    if (tooLarge)
      throw errors.validation('adjustment_too_large', tooLarge, [
        { path: '/amountMinor', message: `must be within ±${fromDbMinor(issuer.adjustmentLimitMinor)}` },
      ]);
    return postAdjustment(tx, {
      ...input,
      issuerId: caller.issuerId,
      chgId,
      actor: caller.tokenId,
      idempotencyKey,
      at: at.issuer,
      recordedAt: at.real,
    });
  });
}

export async function listAdjustments(db: Db, issuerId: string, chgId: string, query: AdjustmentListQuery) {
  await requireGroup(db, issuerId, chgId);
  const keyset = createdAtKeyset(query.cursor, 'desc');
  const rows = await db.adjustment.findMany({
    where: { issuerId, chgId, ...keyset.where },
    orderBy: keyset.orderBy,
    take: query.limit + 1,
  });
  const page = toPage(rows, query.limit, createdAtKey);
  return { data: page.data.map((r) => presentAdjustment(toAdjustment(r))), nextCursor: page.nextCursor };
}

export async function findAdjustment(db: Db, issuerId: string, chgId: string, adjustmentId: string) {
  const row = await db.adjustment.findFirst({ where: { id: adjustmentId, issuerId, chgId } });
  if (!row) throw errors.notFound('adjustment_not_found', `No adjustment ${adjustmentId} in group ${chgId}.`);
  return toAdjustment(row);
}
