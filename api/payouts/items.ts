// A payout's items file: one line per group paid, the file an issuer's core banking credits
// accounts from, and a last line that lets it check what it received (count, total, SHA-256 of
// every byte before). Streamed with constant memory, a page of lines at a time as the response
// drains; lines are written once and never change, so no snapshot is needed, and the checksum
// line says whether the payout was still processing when the file was read.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Db } from '../../prisma/client';
import { fromDbMinor } from '../../core/ledger';

export const ITEMS_PAGE_SIZE = 1000;
const HIGH_WATER_MARK = 64 * 1024;
export type ItemsFormat = 'ndjson' | 'csv';

export const ITEMS_CONTENT_TYPES: Record<ItemsFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
};

const CSV_EOL = '\r\n';
const CSV_COLUMNS = ['chgId', 'externalId', 'amountMinor', 'currency', 'rewardEventId'] as const;

interface ItemLine {
  chgId: string;
  externalId: string;
  amountMinor: number;
  currency: 'usd';
  rewardEventId: string;
}

/** RFC 4180 quoting: an issuer's external id may hold a comma or a quote. */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function line(format: ItemsFormat, item: ItemLine): string {
  if (format === 'ndjson') return JSON.stringify({ record: 'payout_item', ...item }) + '\n';
  return CSV_COLUMNS.map((c) => csvField(item[c])).join(',') + CSV_EOL;
}

async function page(db: Db, payoutId: string, afterChgId: string, size: number): Promise<ItemLine[]> {
  const rows = await db.$queryRaw<Array<{ chgId: string; externalId: string; amount: bigint; rewardEventId: string }>>`
    SELECT i.chg_id AS "chgId", g.external_id AS "externalId", i.amount_minor AS amount, i.reward_event_id AS "rewardEventId"
      FROM payout_item i JOIN cardholder_group g ON g.id = i.chg_id
     WHERE i.payout_id = ${payoutId} AND i.chg_id > ${afterChgId}
     ORDER BY i.chg_id
     LIMIT ${size}`;
  return rows.map((r) => ({
    chgId: r.chgId,
    externalId: r.externalId,
    amountMinor: fromDbMinor(r.amount),
    currency: 'usd',
    rewardEventId: r.rewardEventId,
  }));
}

async function* itemLines(
  db: Db,
  payout: { id: string; status: string },
  format: ItemsFormat,
  pageSize: number,
): AsyncGenerator<string> {
  const hash = createHash('sha256');
  const emit = (text: string) => {
    hash.update(text, 'utf8');
    return text;
  };
  let count = 0;
  let total = 0n;
  if (format === 'csv') yield emit(CSV_COLUMNS.join(',') + CSV_EOL);
  // Bounded by the payout's lines: each page starts after the last group of the one before.
  for (let after = ''; ;) {
    const items = await page(db, payout.id, after, pageSize);
    if (items.length > 0) {
      count += items.length;
      for (const item of items) total += BigInt(item.amountMinor);
      yield emit(items.map((item) => line(format, item)).join(''));
      after = items[items.length - 1].chgId;
    }
    if (items.length < pageSize) break;
  }
  const digest = hash.digest('hex');
  const totalMinor = fromDbMinor(total);
  yield format === 'ndjson'
    ? JSON.stringify({
        record: 'checksum',
        payoutId: payout.id,
        status: payout.status,
        count,
        totalMinor,
        digest: { algorithm: 'sha256', value: digest },
      }) + '\n'
    : `#checksum payoutId=${payout.id} status=${payout.status} count=${count} totalMinor=${totalMinor} sha256=${digest}${CSV_EOL}`;
}

export function payoutItemsStream(
  db: Db,
  payout: { id: string; status: string },
  format: ItemsFormat,
  pageSize = ITEMS_PAGE_SIZE,
): Readable {
  return Readable.from(itemLines(db, payout, format, pageSize), {
    objectMode: false,
    highWaterMark: HIGH_WATER_MARK,
  });
}
