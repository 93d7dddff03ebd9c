// A statement's csv: a header line, then one line per transfer on it, in ledger order (the
// receivable's entry ids), each with what it adds to what the merchant owes, so the lines sum to
// totalDueMinor. The transfers are the entries of the statement's window
// (core/domain/statements.ts): immutable rows, so the file is the same whenever it is read.
// Streamed with constant memory, a page of lines at a time as the response drains.
import { Readable } from 'node:stream';
import type { Statement } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { fromDbMinor } from '../../core/ledger';
import { EXCLUDED_FROM_STATEMENTS, RECEIVABLE_LINES } from '../../core/rules/statements';
import type { TransferKind } from '../../core/ledger';

export const STATEMENT_CSV_PAGE = 1000;
const HIGH_WATER_MARK = 64 * 1024;
const CSV_EOL = '\r\n';
export const STATEMENT_CSV_COLUMNS = [
  'transferId',
  'kind',
  'line',
  'postedAt',
  'amountMinor',
  'transactionId',
  'rewardEventId',
] as const;

interface Row {
  entryId: bigint;
  transferId: string;
  kind: string;
  postedAt: string;
  amount: bigint;
  transactionId: string | null;
  rewardEventId: string | null;
}

async function page(db: Db, s: Statement, afterEntryId: bigint, size: number): Promise<Row[]> {
  return db.$queryRaw<Row[]>`
    SELECT e.id AS "entryId", t.id AS "transferId", t.kind,
           to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "postedAt",
           e.amount_minor AS amount, t.transaction_id AS "transactionId", t.reward_event_id AS "rewardEventId"
      FROM ledger_entry e JOIN ledger_transfer t ON t.id = e.transfer_id
     WHERE e.account_id = ${s.accountId} AND e.id > ${afterEntryId} AND e.id >= ${s.fromId} AND e.id <= ${s.markId}
       AND e.created_at < ${s.periodEnd}
       AND NOT (e.id <= ${s.prevMarkId} AND e.created_at < coalesce(${s.prevPeriodEnd}::timestamptz, '-infinity'::timestamptz))
       AND t.kind <> ALL(${EXCLUDED_FROM_STATEMENTS as readonly string[]}::text[])
     ORDER BY e.id
     LIMIT ${size}`;
}

const field = (v: string | number | null) => (v === null ? '' : String(v));

async function* lines(db: Db, s: Statement, pageSize: number): AsyncGenerator<string> {
  yield STATEMENT_CSV_COLUMNS.join(',') + CSV_EOL;
  // Bounded by the window: each page starts after the last entry of the one before.
  for (let after = 0n; ;) {
    const rows = await page(db, s, after, pageSize);
    if (rows.length > 0) {
      yield rows
        .map((r) => {
          const line = RECEIVABLE_LINES[r.kind as TransferKind]?.line ?? '';
          // The receivable is an asset: a debit (positive entry) adds to what the merchant owes.
          const values = [
            r.transferId,
            r.kind,
            line,
            r.postedAt,
            fromDbMinor(r.amount),
            r.transactionId,
            r.rewardEventId,
          ];
          return values.map(field).join(',') + CSV_EOL;
        })
        .join('');
      after = rows[rows.length - 1].entryId;
    }
    if (rows.length < pageSize) return;
  }
}

export function statementCsvStream(db: Db, s: Statement, pageSize = STATEMENT_CSV_PAGE): Readable {
  return Readable.from(lines(db, s, pageSize), { objectMode: false, highWaterMark: HIGH_WATER_MARK });
}

export const STATEMENT_CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';
