// Streams an issuer's reward events posted in [from, to) with constant memory: keyset pages of
// at most EXPORT_PAGE_SIZE rows ((postedAt, id) after the last row served), read one at a time
// and only when the HTTP response has drained what came before (Readable.from pulls the next
// page when its buffer is below the high-water mark, and Koa pipes it to the socket with
// backpressure). All pages are read in ONE read-only REPEATABLE READ transaction, so the
// export, its count and its totals are one snapshot of the ledger even while postings go on.
import { Readable } from 'node:stream';
import type { Db } from '../../prisma/client';
import { poolOf } from '../../prisma/client';
import { HeldConnection } from '../../prisma/held-connection';
import type { Logger } from '../../core/logger';
import { ACCOMPANYING_KINDS, fromDbMinor } from '../../core/ledger';
import { ExportChecksum, checksumLine, headerLine, rowLine, type ExportFormat, type ExportRow } from './format';

/** Rows per page: about 350 KB of NDJSON, one index range scan each. */
export const EXPORT_PAGE_SIZE = 1000;
/** Bytes the stream buffers ahead of the socket before it stops reading pages. */
export const EXPORT_HIGH_WATER_MARK = 64 * 1024;
/**
 * A client that stops reading holds a connection and a snapshot (which keeps vacuum from
 * cleaning up behind it). PostgreSQL ends a transaction left idle this long, which fails the
 * export and frees both.
 */
export const EXPORT_IDLE_LIMIT = '60s';

export interface ExportOptions {
  issuerId: string;
  from: Date;
  to: Date;
  format: ExportFormat;
  pageSize?: number;
  /** Called with each page's row count as it is read (tests observe the paging). */
  onPage?: (rows: number) => void;
  logger?: Logger;
}

interface PageRow {
  id: string;
  chg_id: string;
  transaction_id: string | null;
  source_event_id: string | null;
  type: string;
  amount_minor: string;
  currency: string;
  occurred_at: Date;
  posted_at: string;
  transfer_id: string | null;
  merchant_id: string | null;
  reward_grant_id: string | null;
  issuer_share_minor: string;
  transfer_ids: string[];
}

// $1 issuer, $2 and $4 the last row served (from and '' for the first page, which the row
// comparison then includes from `from` on), $3 the end of the period, $5 the page size. Served
// by reward_event_export_idx; each event's transfers by ledger_transfer_reward_event_id_idx: the
// event's own first (a funded offer's share and commission belong to the event too).
const ACCOMPANYING = `('${ACCOMPANYING_KINDS.join("', '")}')`;
const PAGE = {
  name: 'reward_event_export_page_v2',
  text: `
    SELECT r.id, r.chg_id, r.transaction_id, r.source_event_id, r.type, r.amount_minor::text AS amount_minor, r.currency,
           r.occurred_at, to_char(r.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS posted_at,
           r.merchant_id, r.reward_grant_id, t.transfer_ids, t.transfer_ids[1] AS transfer_id, t.issuer_share_minor
      FROM reward_event r
      CROSS JOIN LATERAL (
        SELECT coalesce(array_agg(t.id ORDER BY t.kind IN ${ACCOMPANYING}, t.id), '{}') AS transfer_ids,
               coalesce(sum(t.amount_minor) FILTER (WHERE t.kind IN ('issuer_share_cashback', 'issuer_share_branded', 'issuer_share_returned')), 0)::text AS issuer_share_minor
          FROM ledger_transfer t WHERE t.reward_event_id = r.id AND t.issuer_id = r.issuer_id) t
     WHERE r.issuer_id = $1 AND (r.occurred_at, r.id) > ($2::timestamptz, $4::text) AND r.occurred_at < $3::timestamptz
     ORDER BY r.occurred_at, r.id
     LIMIT $5`,
};

async function readPage(
  client: HeldConnection,
  options: ExportOptions,
  after: { at: Date; id: string },
  pageSize: number,
): Promise<PageRow[]> {
  const { rows } = await client.query<PageRow>({
    ...PAGE,
    values: [options.issuerId, after.at, options.to, after.id, pageSize],
  });
  options.onPage?.(rows.length);
  return rows;
}

function toExportRow(r: PageRow): ExportRow {
  return {
    id: r.id,
    chgId: r.chg_id,
    transactionId: r.transaction_id,
    sourceTransactionId: r.source_event_id,
    type: r.type,
    amountMinor: fromDbMinor(r.amount_minor),
    currency: r.currency,
    postedAt: r.posted_at,
    transferId: r.transfer_id,
    merchantId: r.merchant_id,
    rewardGrantId: r.reward_grant_id,
    issuerShareMinor: fromDbMinor(r.issuer_share_minor),
    transferIds: r.transfer_ids,
  };
}

interface OpenExport {
  client: HeldConnection;
  generatedAt: Date;
  firstPage: PageRow[];
  /** Set when the generator runs: from then on its `finally` ends the snapshot. */
  started: boolean;
}

/**
 * Opens the snapshot and reads the first page before the response starts, so that a database
 * failure is still an ordinary error answer (503, 500) rather than a cut-off stream. The
 * connection is held (prisma/held-connection.ts): a connection the server ends while a slow
 * client reads fails this export alone, whose response is then cut before its checksum line.
 */
async function open(db: Db, options: ExportOptions, pageSize: number): Promise<OpenExport> {
  const client = await HeldConnection.checkOut(poolOf(db));
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY');
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = '${EXPORT_IDLE_LIMIT}'`);
    const { rows } = await client.query<{ now: Date }>('SELECT now()');
    const firstPage = await readPage(client, options, { at: options.from, id: '' }, pageSize);
    return { client, generatedAt: rows[0].now, firstPage, started: false };
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
}

/** Header, rows page by page, checksum line; the connection goes back to the pool however it ends. */
async function* exportLines(opened: OpenExport, options: ExportOptions, pageSize: number): AsyncGenerator<string> {
  opened.started = true;
  const { client } = opened;
  const checksum = new ExportChecksum();
  const emit = (text: string) => {
    checksum.addText(text);
    return text;
  };
  let finished = false;
  try {
    const header = headerLine(options.format);
    if (header) yield emit(header);
    let page = opened.firstPage;
    // Bounded by the period's rows: each page starts after the last row of the one before.
    for (;;) {
      if (page.length > 0) {
        const rows = page.map(toExportRow);
        for (const row of rows) checksum.addRow(row);
        yield emit(rows.map((row) => rowLine(options.format, row)).join(''));
      }
      if (page.length < pageSize) break;
      const last = page[page.length - 1];
      page = await readPage(client, options, { at: last.occurred_at, id: last.id }, pageSize);
    }
    yield checksumLine(
      options.format,
      checksum.record({ from: options.from, to: options.to, generatedAt: opened.generatedAt }),
    );
    finished = true;
  } finally {
    await closeSnapshot(client, finished, options.logger);
  }
}

async function closeSnapshot(client: HeldConnection, finished: boolean, logger: Logger | undefined): Promise<void> {
  try {
    // A lost connection has no transaction left to end; releasing it drops it.
    if (!client.lost) await client.query(finished ? 'COMMIT' : 'ROLLBACK');
    client.release();
  } catch (err) {
    // A connection whose transaction cannot be ended is not given back to the pool.
    client.release(err as Error);
    if (finished) logger?.warn({ err }, 'reward-events export: could not end its snapshot');
  }
  if (!finished) logger?.warn('reward-events export ended before its checksum line (client gone or a page failed)');
}

/** The export as a byte stream; rejects (before any byte) when the snapshot cannot be opened. */
export async function openRewardEventExport(db: Db, options: ExportOptions): Promise<Readable> {
  const pageSize = options.pageSize ?? EXPORT_PAGE_SIZE;
  const opened = await open(db, options, pageSize);
  const stream = Readable.from(exportLines(opened, options, pageSize), {
    objectMode: false,
    highWaterMark: EXPORT_HIGH_WATER_MARK,
  });
  // A stream destroyed before its first read never runs the generator, nor its `finally`.
  stream.once('close', () => {
    if (!opened.started) void closeSnapshot(opened.client, false, options.logger);
  });
  return stream;
}
