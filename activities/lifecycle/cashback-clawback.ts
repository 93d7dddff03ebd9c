// Every clawback of cashback, whatever it takes back (a purchase's reward, a completion's, a claim
// credit, or branded value a grant no longer held), splits the same way: from the group's cashback
// balance as far as it reaches, the rest owed because it was already paid out. Only the events and
// transfers each caller posts for the two parts differ.
import { lockAccounts } from '../../core/domain/ledger/accounts';
import { splitClawback, type ClawbackSplit } from '../../core/rules/cashback';
import type { Prisma } from '../../prisma/generated/client';

/** Posts one part of the clawback: `owed` is the part the group's balance could not give. */
export type PostClawbackPart = (amountMinor: number, owed: boolean) => Promise<unknown>;

/** Splits `dueMinor` against the group's cashback balance (locked) and posts each non-empty part. */
export async function takeFromCashback(
  tx: Prisma.TransactionClient,
  cashbackAccountId: string,
  dueMinor: number,
  post: PostClawbackPart,
): Promise<ClawbackSplit> {
  if (dueMinor <= 0) return { fromBalanceMinor: 0, owedMinor: 0 };
  const balance = (await lockAccounts(tx, [cashbackAccountId])).get(cashbackAccountId)!.balanceMinor;
  const split = splitClawback(dueMinor, balance);
  if (split.fromBalanceMinor > 0) await post(split.fromBalanceMinor, false);
  if (split.owedMinor > 0) await post(split.owedMinor, true);
  return split;
}
