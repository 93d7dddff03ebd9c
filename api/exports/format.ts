// The reward-events export's bytes: one line per reward event, as NDJSON or
// CSV, and a last line that lets a finance team check what it received without asking us:
// the count, the count and sum of amounts per type and currency, and a SHA-256 digest of every
// byte before that line. Pure: the stream (stream.ts) feeds it rows and writes its text.
import { createHash, type Hash } from 'node:crypto';
import { fromDbMinor } from '../../core/ledger';

export const EXPORT_FORMATS = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson; charset=utf-8',
  // RFC 4180 registers `header` for text/csv: the first line names the columns.
  csv: 'text/csv; charset=utf-8; header=present',
};

/** One reward event as the export shows it. */
export interface ExportRow {
  id: string;
  chgId: string;
  transactionId: string | null;
  sourceTransactionId: string | null;
  type: string;
  amountMinor: number;
  currency: string;
  postedAt: string;
  transferId: string | null;
  merchantId: string | null;
  rewardGrantId: string | null;
  /**
   * The issuer's share of the amount, on a funded offer (its earn: the share it funds; its
   * clawback: the share returned to it); 0 when the merchant funds it all.
   */
  issuerShareMinor: number;
  /** Every ledger transfer of the event: its own (transferId) first, then a funded offer's share and commission. */
  transferIds: string[];
}

/** The columns of the CSV, in order; the NDJSON objects carry the same fields in the same order. */
export const CSV_COLUMNS = [
  'record',
  'id',
  'chgId',
  'transactionId',
  'sourceTransactionId',
  'type',
  'amountMinor',
  'currency',
  'postedAt',
  'transferId',
  'merchantId',
  'rewardGrantId',
  'issuerShareMinor',
  'transferIds',
] as const;

// CSV lines end in CRLF as RFC 4180 asks; NDJSON lines in LF.
const CSV_EOL = '\r\n';

/** RFC 4180 quoting, for the day a field can hold a comma, a quote or a line break. */
function csvField(value: string | number | string[] | null): string {
  if (value === null) return '';
  // A list (transferIds) is one field, its items separated by spaces.
  const text = Array.isArray(value) ? value.join(' ') : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function headerLine(format: ExportFormat): string {
  return format === 'csv' ? CSV_COLUMNS.join(',') + CSV_EOL : '';
}

export function rowLine(format: ExportFormat, row: ExportRow): string {
  const record = { record: 'reward_event', ...row };
  if (format === 'ndjson') return JSON.stringify(record) + '\n';
  return CSV_COLUMNS.map((c) => csvField(record[c])).join(',') + CSV_EOL;
}

export interface TypeTotal {
  type: string;
  currency: string;
  count: number;
  amountMinor: number;
}

export interface ChecksumRecord {
  record: 'checksum';
  from: string;
  to: string;
  /** When the export's snapshot was taken: events posted later are not in it. */
  generatedAt: string;
  count: number;
  totals: TypeTotal[];
  digest: { algorithm: 'sha256'; value: string };
}

/** Accumulates the checksum over the text written and the rows it holds, in order. */
export class ExportChecksum {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;
  private readonly totals = new Map<string, { type: string; currency: string; count: number; amount: bigint }>();

  /** Every byte written before the checksum line goes through here, in order. */
  addText(text: string): void {
    this.hash.update(text, 'utf8');
  }

  addRow(row: ExportRow): void {
    this.count += 1;
    const key = `${row.type}\u0000${row.currency}`;
    const total = this.totals.get(key) ?? { type: row.type, currency: row.currency, count: 0, amount: 0n };
    total.count += 1;
    // bigint: a long period's sum must not round, whatever its size.
    total.amount += BigInt(row.amountMinor);
    this.totals.set(key, total);
  }

  record(period: { from: Date; to: Date; generatedAt: Date }): ChecksumRecord {
    const totals = [...this.totals.values()]
      .sort((a, b) => (a.type === b.type ? (a.currency < b.currency ? -1 : 1) : a.type < b.type ? -1 : 1))
      .map((t) => ({ type: t.type, currency: t.currency, count: t.count, amountMinor: fromDbMinor(t.amount) }));
    return {
      record: 'checksum',
      from: period.from.toISOString(),
      to: period.to.toISOString(),
      generatedAt: period.generatedAt.toISOString(),
      count: this.count,
      totals,
      digest: { algorithm: 'sha256', value: this.hash.digest('hex') },
    };
  }
}

/**
 * The last line. NDJSON: the record as JSON. CSV: `#checksum` and space-separated key=value
 * pairs, totals as type:currency:count:amountMinor joined by `;`. It holds no comma and no
 * quote, so a strict CSV reader sees one one-field row, and readers that skip `#` comment
 * lines (pandas `comment="#"`, Go's csv.Reader.Comment) skip it.
 */
export function checksumLine(format: ExportFormat, record: ChecksumRecord): string {
  if (format === 'ndjson') return JSON.stringify(record) + '\n';
  const totals = record.totals.map((t) => `${t.type}:${t.currency}:${t.count}:${t.amountMinor}`).join(';');
  return (
    `#checksum count=${record.count} sha256=${record.digest.value} from=${record.from} to=${record.to} ` +
    `generatedAt=${record.generatedAt} totals=${totals}${CSV_EOL}`
  );
}
