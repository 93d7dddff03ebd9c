// The group's branded balance grants at one merchant, for spend eligibility.
import type { Db } from '../../prisma/client';
import type { SpendGrant } from '../../core/rules/spend-eligibility';

/**
 * The ledger (reward grants, `rg_`) arrives with the rewards issue; until then no group
 * holds branded balance, so this returns no grants and spend eligibility reports
 * no_available_balance. The signature is the one the ledger-backed version will keep.
 */
export async function loadBrandedGrants(_db: Db, _issuerId: string, _chgId: string, _merchantId: string): Promise<SpendGrant[]> {
  return [];
}
