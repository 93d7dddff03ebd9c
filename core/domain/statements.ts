// Merchant statements (API.md, "Funded offers", Statements; docs/decisions/0040-merchant-statements.md):
// a statement run bills merchant_receivable accounts a chunk at a time, each chunk in one
// transaction of three SQL queries whatever the number of transfers: read every account's window
// and sums by transfer kind in ONE set-based query, insert the chunk's statements with one, add
// them to the run's totals with one. ("Statement" here is always a merchant's statement.)
//
// A statement's transfers are never listed row by row. They are the entries of its account with
//   id <= mark AND created_at < period_end AND NOT (id <= prev_mark AND created_at < prev_period_end)
// where mark is the account's highest entry id in the snapshot the sums were read in, and prev_*
// are the previous statement's. An entry's id is taken while its account's row is locked
// (core/domain/ledger/batch.ts, postTransfer), so an account's ids grow in commit order and every
// id up to the mark was committed and counted; a posting that commits later has a higher id and
// lands on the next statement, dated in the period or not. The windows of one account's
// statements nest (periods and marks only grow), so each entry is on exactly one statement, and
// an issued statement never changes: its window is fixed and entries are immutable. The merchant's
// breakage account gets the same window (its informational line). A merchant's own payments are
// on no statement: they settle them.
import { Prisma } from '../../prisma/generated/client';
import type { SqlTx } from '../../prisma/sql-transaction';
import { assert, fromDbMinor } from '../ledger';
import { newId } from '../ids';
import { DEFAULT_STATEMENT_CHUNK_ACCOUNTS } from '../config';
import {
  EXCLUDED_FROM_STATEMENTS,
  linesOf,
  periodBounds,
  statementStatus,
  totalDue,
  type StatementLines,
} from '../rules/statements';

/** Receivable accounts billed per chunk (one transaction each) unless the run says otherwise. */
export const STATEMENT_CHUNK_ACCOUNTS = DEFAULT_STATEMENT_CHUNK_ACCOUNTS;

/** Holds every chunk of every run apart: two runs never bill one account at once. */
const BILLING_LOCK = 'statement-billing';

export interface BillChunkInput {
  runId: string;
  period: string;
  /** The last receivable account id of the chunk before ('' for the first). */
  afterAccountId: string;
  limit?: number;
  /** When the statements are issued (the operator's clock). */
  at: Date;
  /** Only this issuer's merchants: what its statements would be (a run bills every issuer). */
  issuerId?: string;
}

/** One statement as billed: its lines, total and the window that fixes its transfers. */
export interface BilledStatement {
  id: string;
  issuerId: string;
  merchantId: string;
  accountId: string;
  lines: StatementLines;
  totalDueMinor: number;
  transferCount: number;
  window: StatementWindow;
}

/** The entries of a statement's two accounts (docs/decisions/0040-merchant-statements.md). */
export interface StatementWindow {
  periodEnd: Date;
  prevPeriodEnd: Date | null;
  fromId: bigint;
  markId: bigint;
  prevMarkId: bigint;
  carriedId: bigint | null;
  breakageFromId: bigint;
  breakageMarkId: bigint;
  breakagePrevMarkId: bigint;
  breakageCarriedId: bigint | null;
}

export interface ChunkBilled {
  /** Where the next chunk starts; null when this one was the last. */
  nextAfterAccountId: string | null;
  statements: BilledStatement[];
}

/** The in-window predicate over `e` (ledger_entry) for an account's window columns. */
const inWindow = (from: Prisma.Sql, mark: Prisma.Sql, prevMark: Prisma.Sql, end: Prisma.Sql, prevEnd: Prisma.Sql) =>
  Prisma.sql`e.id >= ${from} AND e.id <= ${mark} AND e.created_at < ${end}
             AND NOT (e.id <= ${prevMark} AND e.created_at < coalesce(${prevEnd}, '-infinity'::timestamptz))`;

interface ChunkRow {
  accountId: string;
  issuerId: string;
  merchantId: string;
  prevEnd: Date | null;
  fromId: bigint;
  markId: bigint;
  prevMarkId: bigint;
  carriedId: bigint | null;
  bFromId: bigint;
  bMarkId: bigint;
  bPrevMarkId: bigint;
  bCarriedId: bigint | null;
  kinds: Array<{ kind: string; amount: string; count: number; net: string }>;
  breakage: string;
  breakageCount: number;
}

/**
 * The next chunk of receivable accounts after `afterAccountId`, each with the merchant's statement
 * for `period` it would get: the sums of its unbilled transfers by kind, read in one snapshot with its
 * window. Accounts billed for this period or a later one get none (what reaches them now goes on
 * their next statement), and so do those with nothing in their window.
 */
async function readChunk(
  tx: SqlTx,
  input: BillChunkInput,
  limit: number,
): Promise<{ ids: string[]; rows: ChunkRow[] }> {
  const { end } = periodBounds(input.period);
  const accountRows = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM ledger_account
     WHERE kind = 'merchant_receivable' AND id > ${input.afterAccountId}
       ${input.issuerId ? Prisma.sql`AND issuer_id = ${input.issuerId}` : Prisma.empty}
     ORDER BY id LIMIT ${limit}`;
  const ids = accountRows.map((r) => r.id);
  if (ids.length === 0) return { ids, rows: [] };
  const excluded = EXCLUDED_FROM_STATEMENTS as readonly string[];
  const w = (col: string) => Prisma.raw(`w.${col}`);
  const rows = await tx.$queryRaw<ChunkRow[]>`
    WITH accts AS (
      SELECT a.id AS account_id, a.issuer_id, a.merchant_id, a.issuer_id || ':breakage:' || a.merchant_id AS breakage_id
        FROM ledger_account a WHERE a.id = ANY(${ids}::text[])),
    win AS (
      SELECT x.*, p.period_end AS prev_end,
             coalesce(p.mark_id, 0) AS prev_mark, coalesce(p.carried_id, p.mark_id + 1, 0) AS from_id,
             coalesce(p.breakage_mark_id, 0) AS b_prev_mark, coalesce(p.breakage_carried_id, p.breakage_mark_id + 1, 0) AS b_from_id,
             coalesce((SELECT max(e.id) FROM ledger_entry e WHERE e.account_id = x.account_id), 0) AS mark,
             coalesce((SELECT max(e.id) FROM ledger_entry e WHERE e.account_id = x.breakage_id), 0) AS b_mark
        FROM accts x
        LEFT JOIN LATERAL (
          SELECT s.period, s.period_end, s.mark_id, s.carried_id, s.breakage_mark_id, s.breakage_carried_id
            FROM statement s WHERE s.account_id = x.account_id ORDER BY s.period_end DESC LIMIT 1) p ON true
       WHERE p.period IS NULL OR p.period < ${input.period})
    SELECT w.account_id AS "accountId", w.issuer_id AS "issuerId", w.merchant_id AS "merchantId", w.prev_end AS "prevEnd",
           w.from_id AS "fromId", w.mark AS "markId", w.prev_mark AS "prevMarkId",
           w.b_from_id AS "bFromId", w.b_mark AS "bMarkId", w.b_prev_mark AS "bPrevMarkId",
           (SELECT min(e.id) FROM ledger_entry e
             WHERE e.account_id = w.account_id AND e.id >= w.from_id AND e.id <= w.mark AND e.created_at >= ${end}) AS "carriedId",
           (SELECT min(e.id) FROM ledger_entry e
             WHERE e.account_id = w.breakage_id AND e.id >= w.b_from_id AND e.id <= w.b_mark AND e.created_at >= ${end}) AS "bCarriedId",
           (SELECT coalesce(jsonb_agg(jsonb_build_object('kind', k.kind, 'amount', k.amount::text, 'count', k.n, 'net', k.net::text)), '[]'::jsonb)
              FROM (SELECT t.kind, sum(t.amount_minor) AS amount, count(*)::int AS n, sum(e.amount_minor) AS net
                      FROM ledger_entry e JOIN ledger_transfer t ON t.id = e.transfer_id
                     WHERE e.account_id = w.account_id
                       AND ${inWindow(w('from_id'), w('mark'), w('prev_mark'), Prisma.sql`${end}`, w('prev_end'))}
                       AND t.kind <> ALL(${excluded}::text[])
                     GROUP BY t.kind) k) AS kinds,
           -- Breakage, for information: what expired of the merchant-funded part of each grant drawn.
           (SELECT coalesce(sum(d.amount_minor - d.amount_minor * coalesce(sh.amount_minor, 0) / g.amount_minor), 0)::text
              FROM ledger_entry e
              JOIN reward_grant_draw d ON d.transfer_id = e.transfer_id
              JOIN reward_grant g ON g.id = d.grant_id
              JOIN ledger_transfer et ON et.id = g.earn_transfer_id
              LEFT JOIN ledger_transfer sh ON sh.reward_event_id = et.reward_event_id AND sh.kind = 'issuer_share_branded'
             WHERE e.account_id = w.breakage_id
               AND ${inWindow(w('b_from_id'), w('b_mark'), w('b_prev_mark'), Prisma.sql`${end}`, w('prev_end'))}) AS breakage,
           (SELECT count(*)::int FROM ledger_entry e
             WHERE e.account_id = w.breakage_id
               AND ${inWindow(w('b_from_id'), w('b_mark'), w('b_prev_mark'), Prisma.sql`${end}`, w('prev_end'))}) AS "breakageCount"
      FROM win w
     ORDER BY w.account_id`;
  return { ids, rows };
}

/** A chunk's statements, computed from its sums; with nothing in its window, an account gets none. */
function toStatements(rows: ChunkRow[], period: string): BilledStatement[] {
  const { end } = periodBounds(period);
  const billed: BilledStatement[] = [];
  for (const r of rows) {
    const transferCount = r.kinds.reduce((n, k) => n + k.count, 0);
    if (transferCount === 0 && r.breakageCount === 0) continue;
    const lines = linesOf(
      r.kinds.map((k) => ({ kind: k.kind, amountMinor: fromDbMinor(k.amount) })),
      fromDbMinor(r.breakage),
    );
    const total = totalDue(lines);
    // The lines are the receivable's movement, by construction; the entries say so too.
    const net = r.kinds.reduce((sum, k) => sum + fromDbMinor(k.net), 0);
    assert(total === net, `statement for ${r.accountId}: lines total ${total}, entries move ${net}`);
    billed.push({
      id: newId('stm'),
      issuerId: r.issuerId,
      merchantId: r.merchantId,
      accountId: r.accountId,
      lines,
      totalDueMinor: total,
      transferCount,
      window: {
        periodEnd: end,
        prevPeriodEnd: r.prevEnd,
        fromId: BigInt(r.fromId),
        markId: BigInt(r.markId),
        prevMarkId: BigInt(r.prevMarkId),
        carriedId: r.carriedId === null ? null : BigInt(r.carriedId),
        breakageFromId: BigInt(r.bFromId),
        breakageMarkId: BigInt(r.bMarkId),
        breakagePrevMarkId: BigInt(r.bPrevMarkId),
        breakageCarriedId: r.bCarriedId === null ? null : BigInt(r.bCarriedId),
      },
    });
  }
  return billed;
}

/**
 * What the next chunk's statements would be, without issuing them: the billing run's own reading,
 * for checks that every transfer is billed once (the property test) and for previews.
 */
export async function previewChunk(tx: SqlTx, input: BillChunkInput): Promise<ChunkBilled> {
  const limit = input.limit ?? STATEMENT_CHUNK_ACCOUNTS;
  const { ids, rows } = await readChunk(tx, input, limit);
  return {
    nextAfterAccountId: ids.length === limit ? ids[ids.length - 1] : null,
    statements: toStatements(rows, input.period),
  };
}

/**
 * Bills the next chunk of receivable accounts for the run: one statement per account with
 * transfers in its window, inserted by one SQL query with the run's totals. Waits for any other
 * chunk (of this run or another) to commit first. A chunk retried after its commit finds its
 * accounts billed for the period and issues nothing twice.
 */
export async function billChunk(tx: SqlTx, input: BillChunkInput): Promise<ChunkBilled> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${BILLING_LOCK}))`;
  const chunk = await previewChunk(tx, input);
  const s = chunk.statements;
  if (s.length === 0) return chunk;
  const col = <T>(f: (b: BilledStatement) => T) => s.map(f);
  const big = (values: Array<bigint | number | null>) =>
    Prisma.sql`${values.map((v) => (v === null ? null : String(v)))}::text[]::bigint[]`;
  const total = s.reduce((sum, b) => sum + b.totalDueMinor, 0);
  await tx.$executeRaw`
    WITH issued AS (
      INSERT INTO statement (id, run_id, issuer_id, merchant_id, account_id, period, period_end, status,
                             cashback_funded_minor, branded_funded_minor, branded_spent_minor, clawed_back_minor, commission_minor,
                             breakage_minor, total_due_minor, transfer_count, prev_period_end, from_id, mark_id, prev_mark_id, carried_id,
                             breakage_from_id, breakage_mark_id, breakage_prev_mark_id, breakage_carried_id, created_at, updated_at)
      SELECT x.id, ${input.runId}, x.issuer, x.merchant, x.account, ${input.period}, ${periodBounds(input.period).end}, x.status,
             x.cashback, x.branded, x.spent, x.clawed, x.commission, x.breakage, x.total, x.n, x.prev_end, x.from_id, x.mark, x.prev_mark,
             x.carried, x.b_from, x.b_mark, x.b_prev_mark, x.b_carried, ${input.at}, ${input.at}
        FROM unnest(${col((b) => b.id)}::text[], ${col((b) => b.issuerId)}::text[], ${col((b) => b.merchantId)}::text[],
                    ${col((b) => b.accountId)}::text[], ${col((b) => statementStatus(b.totalDueMinor, 0))}::text[],
                    ${big(col((b) => b.lines.cashbackFundedMinor))}, ${big(col((b) => b.lines.brandedFundedMinor))},
                    ${big(col((b) => b.lines.brandedSpentMinor))}, ${big(col((b) => b.lines.clawedBackMinor))},
                    ${big(col((b) => b.lines.commissionMinor))}, ${big(col((b) => b.lines.breakageMinor))},
                    ${big(col((b) => b.totalDueMinor))}, ${col((b) => b.transferCount)}::int[],
                    ${col((b) => b.window.prevPeriodEnd?.toISOString() ?? null)}::timestamptz[],
                    ${big(col((b) => b.window.fromId))}, ${big(col((b) => b.window.markId))}, ${big(col((b) => b.window.prevMarkId))},
                    ${big(col((b) => b.window.carriedId))}, ${big(col((b) => b.window.breakageFromId))},
                    ${big(col((b) => b.window.breakageMarkId))}, ${big(col((b) => b.window.breakagePrevMarkId))},
                    ${big(col((b) => b.window.breakageCarriedId))})
             AS x(id, issuer, merchant, account, status, cashback, branded, spent, clawed, commission, breakage, total, n, prev_end,
                  from_id, mark, prev_mark, carried, b_from, b_mark, b_prev_mark, b_carried)
      RETURNING 1)
    UPDATE statement_run SET statement_count = statement_count + (SELECT count(*) FROM issued),
           total_due_minor = total_due_minor + ${total}, updated_at = ${input.at}
     WHERE id = ${input.runId}`;
  return chunk;
}
