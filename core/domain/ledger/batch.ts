// A settlement's postings written in ONE statement: its transfers with their entries and
// balance changes, its reward events, the grant it opens and the draws it takes. On this
// hardware a statement costs far more than its rows (a socket write each side, a parse, a
// plan), so a settlement that took some forty statements through postTransfer and friends
// takes one here (the group's reward totals included); the rules are the same:
//   - the caller holds the locks of every account the batch touches (ensureAndLockAccounts,
//     in id order) and passes those rows: liability balances are checked against them before
//     anything is written, and a database CHECK backs the check;
//   - every transfer has a unique idempotency key; a key written before fails the statement
//     (the caller's event lock makes that an invariant breach, not a retry);
//   - grant values change only under their branded account's lock, so the draws computed
//     from grants read after that lock are exact, and a CHECK keeps a grant from going below
//     zero if they were not;
//   - accounts the caller did not lock before (the merchant's receivable and commission, the
//     issuer's funding account: shared by many settlements, so held only from here to commit)
//     are locked here in id order before any balance moves, and every entry is inserted after
//     the balances, so each entry's id is taken while its account's row is locked: an account's
//     entry ids grow in commit order, which statements rely on (docs/decisions/0040-merchant-statements.md);
//   - each offer budget's use (several when a merchant's offers stack) is recorded last, after
//     every account's lock, in offer id order (core/domain/budgets.ts), and only if it still fits:
//     else the statement's work is
//     thrown away with BudgetRaceLost and the caller decides again.
// Further CTEs of the caller (the event's outcome, its webhook) join the same statement.
import { Prisma } from '../../../prisma/generated/client';
import { ledgerPostings } from '../../metrics';
import {
  LedgerError,
  LEDGER_INSUFFICIENT_BALANCE,
  LEDGER_INVALID_INPUT,
  REWARD_EVENT_TYPES,
  assert,
  balanceDelta,
  entriesOf,
  isLiability,
  planTransfer,
  requirePositiveMinor,
  type RewardEventType,
  type TransferKind,
} from '../../ledger';
import type { LockedAccount } from './accounts';
import { isCheckViolation } from './tx';
import type { SqlTx } from '../../../prisma/sql-transaction';
import { requireEventAmount, totalsUpsert } from './reward-events';
import { uuidV7 } from '../../ids';
import { BudgetRaceLost, budgetUseCte, type BudgetUse } from '../budgets';

export interface BatchTransfer {
  id: string;
  idempotencyKey: string;
  kind: TransferKind;
  chgId: string;
  /** null for transfers that involve no merchant (a payout, a repayment of what is owed). */
  merchantId: string | null;
  amountMinor: number;
  rewardEventId: string | null;
  transactionId: string | null;
}

export interface BatchRewardEvent {
  id: string;
  idempotencyKey: string;
  chgId: string;
  type: RewardEventType;
  amountMinor: number;
  merchantId: string | null;
  transactionId: string | null;
  rewardGrantId: string | null;
  offerId: string | null;
  sourceEventId: string | null;
  description: string;
  /** The completion of a cumulative offer it earns (null: any other event). */
  completion: number | null;
}

export interface BatchGrant {
  id: string;
  chgId: string;
  merchantId: string;
  accountId: string;
  earnTransferId: string;
  sourceTransactionId: string | null;
  amountMinor: number;
  availableAt: Date;
  expiresAt: Date;
}

export interface BatchDraw {
  grantId: string;
  transferId: string;
  amountMinor: number;
}

/** The cashback a purchase earned, on hold until payableAt (core/rules/cashback.ts). */
export interface BatchHold {
  transactionId: string;
  chgId: string;
  /** The earn_cashback transfers of the same batch that credit it: the purchase's own, and the
   *  completions of cumulative offers it reached. */
  earnTransferIds: string[];
  amountMinor: number;
  payableAt: Date;
}

export interface PostingBatch {
  issuerId: string;
  at: Date;
  transfers: BatchTransfer[];
  rewardEvents: BatchRewardEvent[];
  grants: BatchGrant[];
  draws: BatchDraw[];
  holds: BatchHold[];
  /** The offer budgets the batch's rewards draw on: one per budgeted offer that rewards. */
  budgetUses: BudgetUse[];
}

export const emptyBatch = (issuerId: string, at: Date): PostingBatch => ({
  issuerId,
  at,
  transfers: [],
  rewardEvents: [],
  grants: [],
  draws: [],
  holds: [],
  budgetUses: [],
});

/** Every account the batch's transfers debit or credit. */
export function accountsOf(batch: PostingBatch): Set<string> {
  const ids = new Set<string>();
  for (const t of batch.transfers) {
    const parties = planTransfer(t.kind, { issuerId: batch.issuerId, chgId: t.chgId, merchantId: t.merchantId ?? '' });
    ids.add(parties.debit.id).add(parties.credit.id);
  }
  return ids;
}

// Time-ordered, like every other key (core/ids.ts): a posting appends to the key's index.
export const newTransferId = (): string => uuidV7();

/** What a caller writes in the same statement: CTEs (each `name AS (...)`) and expressions
 *  of the final SELECT (a NOTIFY, which runs only there). */
export interface AlsoWrite {
  ctes: Prisma.Sql[];
  select?: Prisma.Sql[];
}

/**
 * Writes the batch and the caller's own writes in one statement. `locked` holds every account
 * the batch touches: those the caller locked (with their balances), and those it left to this
 * statement (balance NaN, lockPurchaseAccounts' lockedAtWrite). Throws BudgetRaceLost, having
 * written nothing that can commit, when the batch's budget use no longer fits.
 */
export async function writeBatch(
  tx: SqlTx,
  batch: PostingBatch,
  locked: ReadonlyMap<string, LockedAccount>,
  also: AlsoWrite = { ctes: [] },
): Promise<void> {
  const plan = planBatch(batch, locked);
  // Budget rows locked in one order by every writer, so that two stacked settlements cannot deadlock.
  const uses = [...batch.budgetUses].sort((a, b) => (a.offerId < b.offerId ? -1 : a.offerId > b.offerId ? 1 : 0));
  const budget = uses.map((use, i) => budgetUseCte(use, batch.at, AFTER_ACCOUNT_LOCKS, `budget_use_${i}`));
  const ctes = [...ledgerCtes(batch, plan, locked), ...budget, ...also.ctes];
  const extra = also.select?.length ? Prisma.sql`, ${Prisma.join(also.select)}` : Prisma.empty;
  const budgetCount =
    uses.length > 0
      ? Prisma.sql`ARRAY[${Prisma.join(uses.map((_, i) => Prisma.raw(`(SELECT count(*)::int FROM budget_use_${i})`)))}]`
      : Prisma.sql`ARRAY[]::int[]`;
  let counts: Array<{ transfers: number; balances: number; drawn: number; budget: number[] }>;
  try {
    counts = await tx.$queryRaw`
      WITH ${Prisma.join(ctes, ',\n')}
      SELECT (SELECT count(*)::int FROM transfers) AS transfers, (SELECT count(*)::int FROM balances) AS balances,
             (SELECT count(*)::int FROM drawn) AS drawn, ${budgetCount} AS budget ${extra}`;
  } catch (err) {
    if (isCheckViolation(err))
      throw new LedgerError(
        LEDGER_INSUFFICIENT_BALANCE,
        'a posting would take a liability account or a grant below zero',
      );
    throw err;
  }
  const [written] = counts;
  // The budget's row moved under the decision: the caller's transaction rolls back and decides again.
  const lost = uses.find((_, i) => written.budget[i] !== 1);
  if (lost) throw new BudgetRaceLost(lost);
  assert(
    written.transfers === batch.transfers.length,
    `wrote ${written.transfers} of ${batch.transfers.length} transfers`,
  );
  assert(written.balances === plan.deltas.size, `moved ${written.balances} of ${plan.deltas.size} balances`);
  assert(written.drawn === batch.draws.length, `drew from ${written.drawn} of ${batch.draws.length} grants`);
  for (const t of batch.transfers) ledgerPostings.inc({ kind: t.kind });
}

interface BatchPlan {
  entries: Array<{ transferId: string; accountId: string; amountMinor: number }>;
  debits: Map<string, string>;
  credits: Map<string, string>;
  /** Net balance change per account, as the account's holder sees it. */
  deltas: Map<string, number>;
}

/** Validates every row, plans the entries, and checks liability balances against the locks. */
function planBatch(batch: PostingBatch, locked: ReadonlyMap<string, LockedAccount>): BatchPlan {
  const plan: BatchPlan = { entries: [], debits: new Map(), credits: new Map(), deltas: new Map() };
  for (const t of batch.transfers) {
    if (!t.idempotencyKey || t.idempotencyKey.length > 500)
      throw new LedgerError(LEDGER_INVALID_INPUT, 'idempotencyKey must be 1 to 500 characters');
    requirePositiveMinor(t.amountMinor);
    const parties = planTransfer(t.kind, { issuerId: batch.issuerId, chgId: t.chgId, merchantId: t.merchantId ?? '' });
    plan.debits.set(t.id, parties.debit.id);
    plan.credits.set(t.id, parties.credit.id);
    for (const entry of entriesOf(parties, t.amountMinor)) {
      const account = locked.get(entry.accountId);
      assert(account, `account ${entry.accountId} was not locked`);
      plan.entries.push({ transferId: t.id, ...entry });
      plan.deltas.set(
        entry.accountId,
        (plan.deltas.get(entry.accountId) ?? 0) + balanceDelta(account.normalSide, entry.amountMinor),
      );
    }
  }
  for (const [accountId, delta] of plan.deltas) {
    const account = locked.get(accountId)!;
    if (isLiability(account.kind) && account.balanceMinor + delta < 0) {
      throw new LedgerError(
        LEDGER_INSUFFICIENT_BALANCE,
        `account ${accountId} holds ${account.balanceMinor}, cannot give ${-delta}`,
        { accountId, balanceMinor: account.balanceMinor },
      );
    }
  }
  for (const e of batch.rewardEvents) {
    requireEventAmount(e.type, e.amountMinor);
    if (!(REWARD_EVENT_TYPES as readonly string[]).includes(e.type))
      throw new LedgerError(LEDGER_INVALID_INPUT, `unknown reward event type ${e.type}`);
  }
  for (const g of batch.grants) {
    requirePositiveMinor(g.amountMinor);
    if (!(g.availableAt < g.expiresAt))
      throw new LedgerError(LEDGER_INVALID_INPUT, 'availableAt must be before expiresAt');
    const earn = batch.transfers.find((t) => t.id === g.earnTransferId);
    assert(
      earn?.kind === 'earn_branded' && earn.amountMinor === g.amountMinor && plan.credits.get(earn.id) === g.accountId,
      `grant ${g.id} is not funded by its earn`,
    );
  }
  for (const d of batch.draws) requirePositiveMinor(d.amountMinor);
  for (const h of batch.holds) {
    requirePositiveMinor(h.amountMinor);
    const earns = h.earnTransferIds.map((id) => batch.transfers.find((t) => t.id === id));
    assert(
      earns.length > 0 &&
        earns.every((t) => t?.kind === 'earn_cashback' && t.transactionId === h.transactionId) &&
        earns.reduce((sum, t) => sum + t!.amountMinor, 0) === h.amountMinor,
      `the hold of ${h.transactionId} is not the cashback its earns credit`,
    );
  }
  return plan;
}

const text = (values: Array<string | null>) => Prisma.sql`${values}::text[]`;
const bigints = (values: number[]) => Prisma.sql`${values.map(String)}::text[]::bigint[]`;
const times = (values: Date[]) => Prisma.sql`${values.map((d) => d.toISOString())}::text[]::timestamptz[]`;

/**
 * A condition a caller's CTE puts in its WHERE to run after every account of the statement is
 * locked and its balance moved: it reads the balances CTE to the end first.
 */
export const AFTER_ACCOUNT_LOCKS = Prisma.sql`(SELECT count(*) FROM balances) >= 0`;

/** The ledger's CTEs: transfers, write_locks, balances, entries and drawn are always present (maybe empty). */
function ledgerCtes(batch: PostingBatch, plan: BatchPlan, locked: ReadonlyMap<string, LockedAccount>): Prisma.Sql[] {
  const { issuerId, at } = batch;
  const t = batch.transfers;
  const e = batch.rewardEvents;
  const g = batch.grants;
  const d = batch.draws;
  const h = batch.holds;
  // Accounts the caller left to this statement, in id order (PostgreSQL locks a SELECT's rows in
  // its ORDER BY when FOR UPDATE sits on top of the sort): every poster takes them in that order.
  const lockAtWrite = [...plan.deltas.keys()].filter((id) => Number.isNaN(locked.get(id)!.balanceMinor)).sort();
  return [
    Prisma.sql`transfers AS (
      INSERT INTO ledger_transfer (id, issuer_id, idempotency_key, kind, debit_account_id, credit_account_id, amount_minor, reward_event_id, transaction_id, created_at)
      SELECT x.id, ${issuerId}, x.key, x.kind, x.debit, x.credit, x.amount, x.event, x.txn, ${at}
        FROM unnest(${text(t.map((r) => r.id))}, ${text(t.map((r) => r.idempotencyKey))}, ${text(t.map((r) => r.kind))},
                    ${text(t.map((r) => plan.debits.get(r.id)!))}, ${text(t.map((r) => plan.credits.get(r.id)!))}, ${bigints(t.map((r) => r.amountMinor))},
                    ${text(t.map((r) => r.rewardEventId))}, ${text(t.map((r) => r.transactionId))}) AS x(id, key, kind, debit, credit, amount, event, txn)
      RETURNING id)`,
    Prisma.sql`write_locks AS (
      SELECT id FROM ledger_account WHERE id = ANY(${text(lockAtWrite)}) ORDER BY id FOR UPDATE)`,
    Prisma.sql`balances AS (
      UPDATE ledger_account a SET balance_minor = a.balance_minor + x.delta
        FROM unnest(${text([...plan.deltas.keys()])}, ${bigints([...plan.deltas.values()])}) AS x(id, delta)
       WHERE a.id = x.id AND (SELECT count(*) FROM write_locks) >= 0
      RETURNING a.id)`,
    // Joined to the inserted transfers (an entry can only exist with its transfer), and inserted
    // once every balance has moved: its id (the sequence) is taken under its account's lock.
    Prisma.sql`entries AS (
      INSERT INTO ledger_entry (issuer_id, transfer_id, account_id, amount_minor, created_at)
      SELECT ${issuerId}, x.transfer, x.account, x.amount, ${at}
        FROM unnest(${text(plan.entries.map((r) => r.transferId))}, ${text(plan.entries.map((r) => r.accountId))}, ${bigints(plan.entries.map((r) => r.amountMinor))})
             WITH ORDINALITY AS x(transfer, account, amount, n)
        JOIN transfers ON transfers.id = x.transfer
       WHERE ${AFTER_ACCOUNT_LOCKS}
       ORDER BY x.n)`,
    Prisma.sql`reward_events AS (
      INSERT INTO reward_event (id, issuer_id, chg_id, type, amount_minor, currency, merchant_id, transaction_id, reward_grant_id, offer_id, source_event_id, idempotency_key, description, completion, occurred_at, created_at)
      SELECT x.id, ${issuerId}, x.chg, x.type, x.amount, 'usd', x.merchant, x.txn, x.grant_id, x.offer, x.source, x.key, x.description, x.completion, ${at}, ${at}
        FROM unnest(${text(e.map((r) => r.id))}, ${text(e.map((r) => r.chgId))}, ${text(e.map((r) => r.type))}, ${bigints(e.map((r) => r.amountMinor))},
                    ${text(e.map((r) => r.merchantId))}, ${text(e.map((r) => r.transactionId))}, ${text(e.map((r) => r.rewardGrantId))}, ${text(e.map((r) => r.offerId))},
                    ${text(e.map((r) => r.sourceEventId))}, ${text(e.map((r) => r.idempotencyKey))}, ${text(e.map((r) => r.description))},
                    ${text(e.map((r) => (r.completion === null ? null : String(r.completion))))}::int[])
             AS x(id, chg, type, amount, merchant, txn, grant_id, offer, source, key, description, completion))`,
    // The group's running totals, in the same statement as the events they count.
    ...(e.length > 0
      ? [
          Prisma.sql`reward_totals AS (${totalsUpsert(e.map((r) => ({ issuerId, chgId: r.chgId, merchantId: r.merchantId, offerId: r.offerId, type: r.type, amountMinor: r.amountMinor })))})`,
        ]
      : []),
    Prisma.sql`grants AS (
      INSERT INTO reward_grant (id, issuer_id, chg_id, merchant_id, account_id, earn_transfer_id, source_transaction_id, amount_minor, remaining_minor, available_at, expires_at, next_notice_at, created_at, updated_at)
      SELECT x.id, ${issuerId}, x.chg, x.merchant, x.account, x.earn, x.txn, x.amount, x.amount, x.available, x.expires, x.available, ${at}, ${at}
        FROM unnest(${text(g.map((r) => r.id))}, ${text(g.map((r) => r.chgId))}, ${text(g.map((r) => r.merchantId))}, ${text(g.map((r) => r.accountId))},
                    ${text(g.map((r) => r.earnTransferId))}, ${text(g.map((r) => r.sourceTransactionId))}, ${bigints(g.map((r) => r.amountMinor))},
                    ${times(g.map((r) => r.availableAt))}, ${times(g.map((r) => r.expiresAt))}) AS x(id, chg, merchant, account, earn, txn, amount, available, expires)
        JOIN transfers ON transfers.id = x.earn)`,
    Prisma.sql`drawn AS (
      UPDATE reward_grant rg SET remaining_minor = rg.remaining_minor - x.amount, updated_at = ${at}
        FROM unnest(${text(d.map((r) => r.grantId))}, ${bigints(d.map((r) => r.amountMinor))}) AS x(id, amount)
       WHERE rg.id = x.id
      RETURNING rg.id)`,
    Prisma.sql`holds AS (
      INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at, created_at, updated_at)
      SELECT x.txn, ${issuerId}, x.chg, x.amount, x.amount, x.payable, ${at}, ${at}
        FROM unnest(${text(h.map((r) => r.transactionId))}, ${text(h.map((r) => r.chgId))}, ${bigints(h.map((r) => r.amountMinor))},
                    ${times(h.map((r) => r.payableAt))}, ${text(h.map((r) => r.earnTransferIds[0]))}) AS x(txn, chg, amount, payable, earn)
        JOIN transfers ON transfers.id = x.earn
      -- An approved claim's completions join the hold the purchase may have, to the later end.
      ON CONFLICT (transaction_id) DO UPDATE
         SET amount_minor = cashback_hold.amount_minor + EXCLUDED.amount_minor,
             remaining_minor = cashback_hold.remaining_minor + EXCLUDED.remaining_minor,
             payable_at = greatest(cashback_hold.payable_at, EXCLUDED.payable_at),
             updated_at = EXCLUDED.updated_at)`,
    Prisma.sql`draws AS (
      INSERT INTO reward_grant_draw (issuer_id, grant_id, transfer_id, amount_minor, created_at)
      SELECT ${issuerId}, x.grant_id, x.transfer, x.amount, ${at}
        FROM unnest(${text(d.map((r) => r.grantId))}, ${text(d.map((r) => r.transferId))}, ${bigints(d.map((r) => r.amountMinor))}) AS x(grant_id, transfer, amount)
        JOIN transfers ON transfers.id = x.transfer)`,
  ];
}
