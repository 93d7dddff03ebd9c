// The group's rewards summary (API.md, Rewards and reconciliation). Every figure comes from
// the ledger, read by ONE statement (one snapshot, so flows and balances agree, and one round
// trip), and no part of it grows with the length of the group's history:
//   - flows (earned, spent, expired, clawed back) are the running totals of its reward events
//     (reward_total, kept by a trigger in the posting's transaction), which mirror the ledger's
//     transfers one to one;
//   - cashback.balanceMinor is the chg_cashback account's balance;
//   - branded balance is the chg_branded accounts' balances (the remaining value of the
//     grants), split by grant: not yet available (earned within the availability delay) and
//     past expiry but not yet swept by the hourly job (worth nothing to the cardholder, so
//     reported in expiredMinor); the rest is available. Both exceptions are recent grants,
//     found through partial indexes on open grants.
// Adjustments (customer service) are flows too, signed: net credits minus debits; so are payouts.
// Cashback is split into what is on hold (purchases still in their return window: the group's
// running total of its holds, core/domain/cashback-held.ts) and what is payable; what a refund
// reversed after payout is owed (chg_cashback_owed). The identities both sides keep are written
// once, in identities.ts.
// Resolves to undefined when the group is not the issuer's (the caller answers 404).
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import { accounts, fromDbMinor } from '../../core/ledger';
import { splitCashback } from '../../core/rules/cashback';
import { heldAtSql } from '../../core/domain/cashback-held';

export interface RewardsSummary {
  chgId: string;
  currency: 'usd';
  cashback: {
    earnedMinor: number;
    clawedBackMinor: number;
    adjustedMinor: number;
    paidOutMinor: number;
    pendingMinor: number;
    onHoldMinor: number;
    payableMinor: number;
    balanceMinor: number;
    owedMinor: number;
  };
  brandedBalance: {
    earnedMinor: number;
    adjustedMinor: number;
    availableMinor: number;
    notYetAvailableMinor: number;
    spentMinor: number;
    expiredMinor: number;
    clawedBackMinor: number;
  };
}

interface SummaryRow {
  flows: Record<string, string>;
  cashback_balance: string | null;
  cashback_owed: string | null;
  cashback_held: string;
  branded_balance: string;
  not_yet: string;
  awaiting: string;
  pending: string;
}

/**
 * Cashback previewed on authorizations that have not settled (and were not reversed or
 * lapsed): what the group can expect, not yet owed. A settlement joins its authorization's
 * workflow (one lifecycle per purchase), hence the match on workflow_id. Not in the ledger,
 * because a preview posts nothing (DESIGN.md); never part of balanceMinor.
 */
const PENDING_CASHBACK = `
  SELECT COALESCE(SUM((a.match_trace -> 'preview' ->> 'cashbackMinor')::bigint), 0)::text
    FROM ingested_event a
   WHERE a.issuer_id = g.issuer_id AND a.chg_id = g.id AND a.kind = 'auth' AND a.reward_status = 'previewed'
     AND NOT EXISTS (SELECT 1 FROM ingested_event s
                      WHERE s.workflow_id = a.workflow_id AND s.issuer_id = a.issuer_id AND s.kind = 'settled' AND s.state = 'settled')`;

// $1 issuer, $2 group, $3 the group's cashback account, $4 the instant, $5 what the group owes.
const SUMMARY: HotStatement = {
  name: 'rewards_summary_v3',
  text: `
    SELECT
      (SELECT coalesce(jsonb_object_agg(x.type, x.amount::text), '{}'::jsonb)
         FROM (SELECT type, sum(amount_minor) AS amount FROM reward_total WHERE issuer_id = g.issuer_id AND chg_id = g.id GROUP BY type) x) AS flows,
      (SELECT balance_minor::text FROM ledger_account WHERE id = $3) AS cashback_balance,
      (SELECT balance_minor::text FROM ledger_account WHERE id = $5) AS cashback_owed,
      (${heldAtSql('g.issuer_id', 'g.id', '$4')})::text AS cashback_held,
      (SELECT coalesce(sum(balance_minor), 0)::text FROM ledger_account
        WHERE issuer_id = g.issuer_id AND chg_id = g.id AND kind = 'chg_branded') AS branded_balance,
      (SELECT coalesce(sum(remaining_minor), 0)::text FROM reward_grant
        WHERE issuer_id = g.issuer_id AND chg_id = g.id AND remaining_minor > 0 AND available_at > $4 AND expires_at > $4) AS not_yet,
      (SELECT coalesce(sum(remaining_minor), 0)::text FROM reward_grant
        WHERE issuer_id = g.issuer_id AND chg_id = g.id AND remaining_minor > 0 AND expires_at <= $4) AS awaiting,
      (${PENDING_CASHBACK}) AS pending
    FROM cardholder_group g WHERE g.id = $2 AND g.issuer_id = $1`,
};

export async function rewardsSummary(
  db: Db,
  issuerId: string,
  chgId: string,
  at: Date,
): Promise<RewardsSummary | undefined> {
  const [row] = await hotQuery<SummaryRow>(db, SUMMARY, [
    issuerId,
    chgId,
    accounts.chgCashback(issuerId, chgId).id,
    at,
    accounts.chgCashbackOwed(issuerId, chgId).id,
  ]);
  if (!row) return undefined;
  const flow = (type: string) => fromDbMinor(row.flows[type] ?? 0);
  const notYet = fromDbMinor(row.not_yet);
  const awaiting = fromDbMinor(row.awaiting);
  const balanceMinor = fromDbMinor(row.cashback_balance ?? 0);
  const { onHoldMinor, payableMinor } = splitCashback(balanceMinor, fromDbMinor(row.cashback_held));
  return {
    chgId,
    currency: 'usd',
    cashback: {
      earnedMinor: flow('cashback_earned'),
      clawedBackMinor: flow('cashback_clawed_back'),
      adjustedMinor: flow('cashback_adjusted'),
      // Stored negative, as the activity feed shows it; a total here.
      paidOutMinor: 0 - flow('cashback_paid_out'),
      pendingMinor: fromDbMinor(row.pending),
      onHoldMinor,
      payableMinor,
      balanceMinor,
      owedMinor: fromDbMinor(row.cashback_owed ?? 0),
    },
    brandedBalance: {
      earnedMinor: flow('branded_earned'),
      adjustedMinor: flow('branded_adjusted'),
      availableMinor: fromDbMinor(row.branded_balance) - notYet - awaiting,
      notYetAvailableMinor: notYet,
      spentMinor: flow('branded_spent'),
      expiredMinor: flow('branded_expired') + awaiting,
      clawedBackMinor: flow('branded_clawed_back'),
    },
  };
}
