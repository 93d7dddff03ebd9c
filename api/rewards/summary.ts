// The group's rewards summary (API.md, Rewards and reconciliation). Every figure comes from
// the ledger, read in ONE repeatable-read snapshot so flows and balances agree:
//   - flows (earned, spent, expired, clawed back) are sums of reward events, which mirror the
//     ledger's transfers one to one (each transfer carries its reward event);
//   - cashback.balanceMinor is the chg_cashback account's balance;
//   - branded available / not-yet-available split the chg_branded accounts' balances (the
//     remaining value of the grants) by each grant's availableAt. Value past expiresAt that
//     the hourly expiry job has not moved to breakage yet is already worth nothing to the
//     cardholder (spend eligibility ignores it), so it is reported in expiredMinor.
// Hence, for branded balance: earned = spent + expired + clawedBack + available + notYetAvailable.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { accounts, fromDbMinor } from '../../core/ledger';

export interface RewardsSummary {
  chgId: string;
  currency: 'usd';
  cashback: { earnedMinor: number; clawedBackMinor: number; pendingMinor: number; balanceMinor: number };
  brandedBalance: { earnedMinor: number; availableMinor: number; notYetAvailableMinor: number; spentMinor: number; expiredMinor: number; clawedBackMinor: number };
}

type Tx = Prisma.TransactionClient;

export async function rewardsSummary(db: Db, issuerId: string, chgId: string, at: Date): Promise<RewardsSummary> {
  return db.$transaction((tx) => summaryIn(tx, issuerId, chgId, at), { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead });
}

async function summaryIn(tx: Tx, issuerId: string, chgId: string, at: Date): Promise<RewardsSummary> {
  const flows = await flowsByType(tx, issuerId, chgId);
  const flow = (type: string) => flows.get(type) ?? 0;
  const cashbackAccount = await tx.ledgerAccount.findUnique({ where: { id: accounts.chgCashback(issuerId, chgId).id }, select: { balanceMinor: true } });
  const branded = await brandedBuckets(tx, issuerId, chgId, at);
  return {
    chgId,
    currency: 'usd',
    cashback: {
      earnedMinor: flow('cashback_earned'),
      clawedBackMinor: flow('cashback_clawed_back'),
      pendingMinor: await pendingCashback(tx, issuerId, chgId),
      balanceMinor: cashbackAccount ? fromDbMinor(cashbackAccount.balanceMinor) : 0,
    },
    brandedBalance: {
      earnedMinor: flow('branded_earned'),
      availableMinor: branded.available,
      notYetAvailableMinor: branded.notYetAvailable,
      spentMinor: flow('branded_spent'),
      expiredMinor: flow('branded_expired') + branded.awaitingExpiry,
      clawedBackMinor: flow('branded_clawed_back'),
    },
  };
}

async function flowsByType(tx: Tx, issuerId: string, chgId: string): Promise<Map<string, number>> {
  const rows = await tx.rewardEvent.groupBy({ by: ['type'], where: { issuerId, chgId }, _sum: { amountMinor: true } });
  return new Map(rows.map((r) => [r.type, fromDbMinor(r._sum.amountMinor ?? 0n)]));
}

/** The remaining value of the group's grants (= its chg_branded balances) by state at `at`. */
export async function brandedBuckets(tx: Tx | Db, issuerId: string, chgId: string, at: Date, merchantId?: string) {
  const [row] = await tx.$queryRaw<{ available: bigint; not_yet: bigint; awaiting: bigint; expiring30: bigint }[]>`
    SELECT COALESCE(SUM(remaining_minor) FILTER (WHERE expires_at > ${at} AND available_at <= ${at}), 0)::bigint AS available,
           COALESCE(SUM(remaining_minor) FILTER (WHERE expires_at > ${at} AND available_at > ${at}), 0)::bigint AS not_yet,
           COALESCE(SUM(remaining_minor) FILTER (WHERE expires_at <= ${at}), 0)::bigint AS awaiting,
           COALESCE(SUM(remaining_minor) FILTER (WHERE expires_at > ${at} AND expires_at <= ${new Date(at.getTime() + 30 * 86_400_000)}), 0)::bigint AS expiring30
      FROM reward_grant
     WHERE issuer_id = ${issuerId} AND chg_id = ${chgId} AND remaining_minor > 0
       ${merchantId === undefined ? Prisma.empty : Prisma.sql`AND merchant_id = ${merchantId}`}`;
  return {
    available: fromDbMinor(row.available),
    notYetAvailable: fromDbMinor(row.not_yet),
    awaitingExpiry: fromDbMinor(row.awaiting),
    expiringWithin30Days: fromDbMinor(row.expiring30),
  };
}

/**
 * Cashback previewed on authorizations that have not settled (and were not reversed or
 * lapsed): what the group can expect, not yet owed. A settlement joins its authorization's
 * workflow (one lifecycle per purchase), hence the match on workflow_id. Not in the ledger, because a preview posts
 * nothing (DESIGN.md); never part of balanceMinor.
 */
async function pendingCashback(tx: Tx, issuerId: string, chgId: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ pending: bigint }[]>`
    SELECT COALESCE(SUM((a.match_trace -> 'preview' ->> 'cashbackMinor')::bigint), 0)::bigint AS pending
      FROM ingested_event a
     WHERE a.issuer_id = ${issuerId} AND a.chg_id = ${chgId} AND a.kind = 'auth' AND a.reward_status = 'previewed'
       AND NOT EXISTS (SELECT 1 FROM ingested_event s
                        WHERE s.workflow_id = a.workflow_id AND s.issuer_id = a.issuer_id AND s.kind = 'settled' AND s.state = 'settled')`;
  return fromDbMinor(row.pending);
}
