// Ledger lineage of one settled transaction: the transfers behind the
// reward events reward-detail lists for it, each with its entries and their accounts. One
// statement, so the transfers, entries and accounts shown are one snapshot of the ledger.
import type { Db } from '../../prisma/client';
import { hotQuery, type HotStatement } from '../../prisma/hot';
import { fromDbMinor } from '../../core/ledger';

interface EntryJson {
  accountId: string;
  accountKind: string;
  chgId: string | null;
  merchantId: string | null;
  /** As stored: debits positive. */
  amountMinor: string;
}

interface TransferJson {
  transferId: string;
  kind: string;
  rewardEventId: string;
  rewardEventType: string;
  transactionId: string | null;
  postedAt: string;
  amountMinor: string;
  entries: EntryJson[];
}

// $1 issuer, $2 group, $3 transaction. The reward events are chosen exactly as reward-detail
// chooses them (api/rewards/reward-detail.ts): a purchase owns its earnings, spends, the expiry
// of its grants and the clawbacks of its refunds; a refund shows the clawbacks it caused. Entries
// come debit first (the stored amount is positive for a debit).
const LINEAGE: HotStatement = {
  name: 'ledger_lineage_v1',
  text: `
    SELECT e.id,
      (SELECT coalesce(jsonb_agg(x ORDER BY x.posted, x."transferId"), '[]'::jsonb) FROM (
         SELECT t.id AS "transferId", t.kind, t.reward_event_id AS "rewardEventId", r.type AS "rewardEventType",
                t.transaction_id AS "transactionId", t.created_at AS posted,
                to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "postedAt",
                t.amount_minor::text AS "amountMinor",
                (SELECT jsonb_agg(jsonb_build_object('accountId', a.id, 'accountKind', a.kind, 'chgId', a.chg_id, 'merchantId', a.merchant_id,
                                                     'amountMinor', le.amount_minor::text) ORDER BY le.amount_minor DESC, le.id)
                   FROM ledger_entry le JOIN ledger_account a ON a.id = le.account_id
                  WHERE le.transfer_id = t.id) AS entries
           FROM reward_event r
           JOIN ledger_transfer t ON t.reward_event_id = r.id AND t.issuer_id = r.issuer_id
          WHERE r.issuer_id = e.issuer_id
            AND ((e.state <> 'refunded' AND r.transaction_id = e.id) OR (e.state = 'refunded' AND r.source_event_id = e.id))) x
      ) AS transfers
      FROM ingested_event e
     WHERE e.id = $3 AND e.issuer_id = $1 AND e.chg_id = $2 AND e.kind = 'settled'`,
};

export interface PublicEntry {
  accountId: string;
  accountKind: string;
  chgId: string | null;
  merchantId: string | null;
  direction: 'debit' | 'credit';
  amountMinor: number;
  currency: 'usd';
}

export interface PublicTransfer {
  transferId: string;
  kind: string;
  rewardEventId: string;
  rewardEventType: string;
  transactionId: string | null;
  postedAt: string;
  amountMinor: number;
  currency: 'usd';
  entries: PublicEntry[];
}

/** The transfers of a transaction, or undefined when it is not a settled transaction of the issuer's group. */
export async function findLedgerLineage(
  db: Db,
  issuerId: string,
  chgId: string,
  txnId: string,
): Promise<PublicTransfer[] | undefined> {
  const rows = await hotQuery<{ id: string; transfers: TransferJson[] }>(db, LINEAGE, [issuerId, chgId, txnId]);
  if (rows.length === 0) return undefined;
  return rows[0].transfers.map(presentTransfer);
}

function presentTransfer(t: TransferJson): PublicTransfer {
  const entries = t.entries.map(presentEntry);
  // Double entry, asserted on the way out as on the way in: a transfer's entries sum to zero.
  const sum = entries.reduce((s, e) => s + e.amountMinor, 0);
  if (sum !== 0) throw new Error(`transfer ${t.transferId} has entries summing to ${sum}`);
  return {
    transferId: t.transferId,
    kind: t.kind,
    rewardEventId: t.rewardEventId,
    rewardEventType: t.rewardEventType,
    transactionId: t.transactionId,
    postedAt: t.postedAt,
    amountMinor: fromDbMinor(t.amountMinor),
    currency: 'usd',
    entries,
  };
}

/**
 * The ledger stores a debit as a positive amount; API.md publishes entries with debits
 * negative. `direction` spells it out so no reader has to remember which convention is shown.
 */
export function presentEntry(e: EntryJson): PublicEntry {
  const stored = fromDbMinor(e.amountMinor);
  return {
    accountId: e.accountId,
    accountKind: e.accountKind,
    chgId: e.chgId,
    merchantId: e.merchantId,
    direction: stored > 0 ? 'debit' : 'credit',
    amountMinor: -stored,
    currency: 'usd',
  };
}
