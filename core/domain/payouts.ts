// Paying cashback out (API.md, "Cashback that is paid out"; DESIGN.md, Ledger): each group's
// payout is one transfer (chg_cashback -> issuer_payable) with its cashback_paid_out reward event
// (negative, as the activity feed shows it) and one line of its payout (payout_item), written for
// many groups in ONE statement (core/domain/ledger/batch.ts): a payout run pays its groups a
// chunk at a time, and a single group's cash-out is the same posting for one. Only payable
// cashback is ever paid: what purchases still in their return window earned stays (the hold, as
// of the payout's `asOf`, core/rules/cashback.ts, read from the group's running total,
// core/domain/cashback-held.ts). A group is paid at most once per payout: a line exists per
// (payout, group), the transfer's key is derived from both, and a retried chunk skips the groups
// that have their line.
import { Prisma } from '../../prisma/generated/client';
import type { SqlTx } from '../../prisma/sql-transaction';
import { DEFAULT_PAYOUT_CHUNK_GROUPS } from '../config';
import { errors } from '../errors';
import { newId } from '../ids';
import { accounts, fromDbMinor } from '../ledger';
import { payoutDue, splitCashback } from '../rules/cashback';
import { factKey } from '../webhooks/fact-webhooks';
import { ensureAndLockAccounts, type LockedAccount } from './ledger/accounts';
import { emptyBatch, newTransferId, writeBatch } from './ledger/batch';
import { recordFactWebhooks } from './webhook-records';
import { heldAtSql } from './cashback-held';

export const PAYOUT_CHUNK_SIZE = DEFAULT_PAYOUT_CHUNK_GROUPS;

export interface PayGroupsInput {
  issuerId: string;
  payoutId: string;
  /** The issuer's clock when the payout was created: what is on hold is decided as of then. */
  asOf: Date;
  /** The issuer's clock now: dates the postings. */
  at: Date;
  minimumMinor: number;
  /** The groups' chg_cashback account ids. */
  accountIds: string[];
  /** A single group's payout of exactly this much (else all of each group's payable cashback). */
  amountMinor?: number;
}

export interface PaidGroup {
  chgId: string;
  amountMinor: number;
  rewardEventId: string;
  transferId: string;
}

interface HeldGroup {
  account: LockedAccount & { chgId: string };
  payableMinor: number;
}

/**
 * Pays each group of `accountIds` that has no line in this payout yet: the exact amount asked
 * (throws 409 insufficient_balance beyond what is payable), or all of its payable cashback when
 * that reaches the minimum. Locks the groups' cashback accounts in id order, then the issuer's
 * payable account, whose id sorts after them (`<issuer>:issuer_payable` > `<issuer>:chg_*`).
 */
export async function payGroups(tx: SqlTx, input: PayGroupsInput): Promise<PaidGroup[]> {
  const groups = await lockUnpaidGroups(tx, input);
  const paying = groups.map((g) => ({ ...g, amountMinor: amountToPay(g, input) })).filter((g) => g.amountMinor > 0);
  if (paying.length === 0) return [];
  const payable = accounts.issuerPayable(input.issuerId);
  const locked = await ensureAndLockAccounts(tx, [payable], input.at);
  for (const g of paying) locked.set(g.account.id, g.account);
  const batch = emptyBatch(input.issuerId, input.at);
  const paid: PaidGroup[] = [];
  for (const g of paying) {
    const rewardEventId = newId('brevt');
    const transferId = newTransferId();
    const key = `payout:${input.payoutId}:${g.account.chgId}`;
    const common = { chgId: g.account.chgId, merchantId: null, transactionId: null };
    batch.transfers.push({
      id: transferId,
      idempotencyKey: key,
      kind: 'payout_cashback',
      amountMinor: g.amountMinor,
      rewardEventId,
      ...common,
    });
    batch.rewardEvents.push({
      id: rewardEventId,
      idempotencyKey: `${key}:cashback_paid_out`,
      type: 'cashback_paid_out',
      amountMinor: -g.amountMinor,
      rewardGrantId: null,
      offerId: null,
      sourceEventId: null,
      description: 'Cashback paid out',
      completion: null,
      ...common,
    });
    paid.push({ chgId: g.account.chgId, amountMinor: g.amountMinor, rewardEventId, transferId });
  }
  await writeBatch(tx, batch, locked, { ctes: lineCtes(input, paid) });
  await recordFactWebhooks(
    tx,
    paid.map((p) => ({
      issuerId: input.issuerId,
      type: 'cashback_paid_out',
      factKey: factKey.cashbackPaidOut(input.payoutId, p.chgId),
      sourceId: input.payoutId,
      at: input.at,
      data: {
        chgId: p.chgId,
        payoutId: input.payoutId,
        currency: 'usd',
        amountMinor: p.amountMinor,
        rewardEventId: p.rewardEventId,
      },
    })),
  );
  return paid;
}

function amountToPay(g: HeldGroup, input: PayGroupsInput): number {
  if (input.amountMinor === undefined) return payoutDue(g.payableMinor, input.minimumMinor);
  if (input.amountMinor > g.payableMinor)
    throw errors.conflict(
      'insufficient_balance',
      `The group has ${g.payableMinor} minor units of payable cashback; a payout of ${input.amountMinor} is more.`,
      { balanceType: 'cashback', merchantId: null, availableMinor: g.payableMinor },
    );
  return input.amountMinor;
}

/** The groups' cashback accounts, locked in id order, with what each may be paid; those paid by this payout left out. */
async function lockUnpaidGroups(tx: SqlTx, input: PayGroupsInput): Promise<HeldGroup[]> {
  if (input.accountIds.length === 0) return [];
  // Locked first, read after, in a statement of its own: its snapshot is taken once the locks are
  // held, so a settlement that committed while this waited is in both the balance and the hold
  // (read in the locking statement, the balance would be the latest and the hold the older one).
  await tx.$queryRaw`
    SELECT a.id FROM ledger_account a
     WHERE a.id = ANY(${input.accountIds}::text[]) AND a.issuer_id = ${input.issuerId} AND a.kind = 'chg_cashback'
     ORDER BY a.id FOR UPDATE`;
  const rows = await tx.$queryRaw<Array<{ id: string; chgId: string; balance: bigint; held: bigint }>>`
    SELECT l.id, l.chg_id AS "chgId", l.balance_minor AS balance,
           (${Prisma.raw(heldAtSql('l.issuer_id', 'l.chg_id', 'p.as_of'))})::bigint AS held
      FROM ledger_account l CROSS JOIN (SELECT ${input.asOf}::timestamptz AS as_of) p
     WHERE l.id = ANY(${input.accountIds}::text[]) AND l.issuer_id = ${input.issuerId} AND l.kind = 'chg_cashback'
       AND NOT EXISTS (SELECT 1 FROM payout_item i WHERE i.payout_id = ${input.payoutId} AND i.chg_id = l.chg_id)
     ORDER BY l.id`;
  return rows.map((r) => {
    const balanceMinor = fromDbMinor(r.balance);
    return {
      account: { id: r.id, chgId: r.chgId, kind: 'chg_cashback', normalSide: 'credit', balanceMinor },
      payableMinor: splitCashback(balanceMinor, fromDbMinor(r.held)).payableMinor,
    };
  });
}

const text = (values: string[]) => Prisma.sql`${values}::text[]`;

/** The payout's lines and running totals, in the postings' statement (joined to the transfers written). */
function lineCtes(input: PayGroupsInput, paid: PaidGroup[]): Prisma.Sql[] {
  const total = paid.reduce((sum, p) => sum + p.amountMinor, 0);
  return [
    Prisma.sql`payout_lines AS (
      INSERT INTO payout_item (payout_id, chg_id, issuer_id, amount_minor, reward_event_id, transfer_id, created_at)
      SELECT ${input.payoutId}, x.chg, ${input.issuerId}, x.amount, x.event, x.transfer, ${input.at}
        FROM unnest(${text(paid.map((p) => p.chgId))}, ${paid.map((p) => String(p.amountMinor))}::text[]::bigint[],
                    ${text(paid.map((p) => p.rewardEventId))}, ${text(paid.map((p) => p.transferId))}) AS x(chg, amount, event, transfer)
        JOIN transfers ON transfers.id = x.transfer)`,
    Prisma.sql`payout_totals AS (
      UPDATE payout SET group_count = group_count + ${paid.length}, total_minor = total_minor + ${total}, updated_at = ${input.at}
       WHERE id = ${input.payoutId})`,
  ];
}

/**
 * The next chunk of a run's groups after `afterAccountId`: the chg_cashback accounts of its
 * active groups (all of them, or those it lists) holding at least the minimum, in id order (the
 * ledger_account_issuer_id_kind_id_idx order). A group's hold may leave less payable than that.
 */
export async function nextChunk(
  tx: SqlTx,
  run: { issuerId: string; minimumMinor: number; chgIds: string[] | null },
  afterAccountId: string,
  limit = PAYOUT_CHUNK_SIZE,
): Promise<string[]> {
  const rows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT a.id FROM ledger_account a JOIN cardholder_group g ON g.id = a.chg_id
     WHERE a.issuer_id = ${run.issuerId} AND a.kind = 'chg_cashback' AND a.id > ${afterAccountId}
       AND a.balance_minor >= ${Math.max(run.minimumMinor, 1)} AND g.status = 'active'
       ${run.chgIds ? Prisma.sql`AND a.chg_id = ANY(${run.chgIds}::text[])` : Prisma.empty}
     ORDER BY a.id
     LIMIT ${limit}`;
  return rows.map((r) => r.id);
}
