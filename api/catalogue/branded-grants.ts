// The group's branded balance grants at one merchant that still hold value and have not
// expired (pending or available), for spend eligibility. Read from the ledger's grants
// (`rg_`), whose remaining value always equals the branded liability account's balance.
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';
import type { SpendGrant } from '../../core/rules/spend-eligibility';
import { fromDbMinor } from '../../core/ledger';

export async function loadBrandedGrants(
  db: Db | Prisma.TransactionClient,
  issuerId: string,
  chgId: string,
  merchantId: string,
  at: Date = new Date(),
): Promise<SpendGrant[]> {
  const rows = await db.rewardGrant.findMany({
    where: { issuerId, chgId, merchantId, remainingMinor: { gt: 0n }, expiresAt: { gt: at } },
    select: { remainingMinor: true, availableAt: true, expiresAt: true },
  });
  return rows.map((g) => ({ remainingMinor: fromDbMinor(g.remainingMinor), availableAt: g.availableAt, expiresAt: g.expiresAt }));
}
