// The audit trail's verifier (API.md, "Operators with names"; decision 0058). The database
// chains each row on insert (migration 20261203150000_audit_trail, audit_row_hash); this
// recomputes every hash here, from the fields as text, so a verifier that passes does not take
// the database's word for it. It walks the rows in their order in pages and stops at the first
// break: a row whose fields no longer give its hash (edited), whose previous hash is not the row
// before's (inserted, or the one before removed), a place skipped (removed), or a chain that ends
// elsewhere than the head the database keeps says it does (the last rows removed, or one added
// past it behind the trigger's back).
import { createHash } from 'node:crypto';
import type pg from 'pg';

/** A row as the hash reads it: every field as text, NULL as null. */
export interface ChainRow {
  seq: string;
  id: string;
  at_ms: string;
  actor: string;
  roles: string | null;
  action: string;
  target_id: string | null;
  outcome: string | null;
  status_code: string | null;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: string;
  prev_hash: string | null;
  hash: string;
}

export type ChainBreak = 'edited' | 'link' | 'gap' | 'head';

export interface ChainVerdict {
  ok: boolean;
  /** Rows checked (all of them when ok). */
  rows: number;
  /** The first row where the chain breaks (for `head`, the last row there is). */
  firstBrokenId?: string;
  firstBrokenSeq?: number;
  reason?: ChainBreak;
  /** The last row's hash: an operator who writes it down elsewhere can later prove nothing before it changed. */
  headHash: string | null;
}

/** One field as audit_field renders it: its UTF-8 length, a colon and itself; '-' for NULL. */
function field(v: string | null): string {
  return v === null ? '-' : `${Buffer.byteLength(v, 'utf8')}:${v}`;
}

/** The hash the row must carry, as audit_row_hash computes it. */
export function rowHash(r: Omit<ChainRow, 'hash'>): string {
  const text =
    field(r.seq) +
    field(r.id) +
    field(r.at_ms) +
    field(r.actor) +
    field(r.roles) +
    field(r.action) +
    field(r.target_id) +
    field(r.outcome) +
    field(r.status_code) +
    field(r.request_id) +
    field(r.ip) +
    field(r.user_agent) +
    field(r.details) +
    field(r.prev_hash);
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

const PAGE = `
  -- The table's seq orders, not the text it is read as ('10' sorts before '2').
  SELECT seq::text, id, ((extract(epoch FROM created_at) * 1000)::bigint)::text AS at_ms, actor,
         array_to_string(operator_roles, ',') AS roles, action, target_id, outcome, status_code::text,
         request_id, ip, user_agent, details::text AS details, prev_hash, hash
    FROM operator_audit_log l WHERE l.seq > $1 AND l.seq <= $3 ORDER BY l.seq LIMIT $2`;

const PAGE_ROWS = 20_000;

/** Walks the whole chain (a million rows read in pages of PAGE_ROWS). */
export async function verifyAuditChain(pool: pg.Pool): Promise<ChainVerdict> {
  // The head first: a row and the head move in one transaction, so every row up to it is there,
  // and rows appended while the walk goes on are left for the next verification. In the same
  // statement (one snapshot), a row past the head: one the database's trigger never placed.
  const head = await pool.query<{ seq: string; hash: string | null; beyond_id: string | null; beyond_seq: string }>(
    `SELECT h.seq::text, h.hash, b.id AS beyond_id, b.seq::text AS beyond_seq
       FROM audit_chain_head h
       LEFT JOIN LATERAL (SELECT l.id, l.seq FROM operator_audit_log l WHERE l.seq > h.seq ORDER BY l.seq LIMIT 1) b ON true
      WHERE h.id = 1`,
  );
  const headSeq = head.rows[0]?.seq ?? '0';
  const headHash = head.rows[0]?.hash ?? null;
  const beyond = head.rows[0]?.beyond_id ?? null;
  if (beyond !== null)
    return {
      ok: false,
      rows: 0,
      firstBrokenId: beyond,
      firstBrokenSeq: Number(head.rows[0].beyond_seq),
      reason: 'head',
      headHash,
    };
  let rows = 0;
  let last: { seq: bigint; hash: string; id: string } | undefined;
  const broken = (row: ChainRow, reason: ChainBreak): ChainVerdict => ({
    ok: false,
    rows,
    firstBrokenId: row.id,
    firstBrokenSeq: Number(row.seq),
    reason,
    headHash: last?.hash ?? null,
  });
  for (;;) {
    const page = await pool.query<ChainRow>(PAGE, [String(last?.seq ?? 0n), PAGE_ROWS, headSeq]);
    for (const row of page.rows) {
      const seq = BigInt(row.seq);
      // The chain starts at 1 with no previous hash: rows removed from its start are a gap too.
      if (seq !== (last?.seq ?? 0n) + 1n) return broken(row, 'gap');
      if (row.prev_hash !== (last?.hash ?? null)) return broken(row, 'link');
      if (rowHash(row) !== row.hash) return broken(row, 'edited');
      rows++;
      last = { seq, hash: row.hash, id: row.id };
    }
    if (page.rows.length < PAGE_ROWS) break;
  }
  if (BigInt(headSeq) !== (last?.seq ?? 0n) || headHash !== (last?.hash ?? null))
    return {
      ok: false,
      rows,
      firstBrokenId: last?.id,
      firstBrokenSeq: last === undefined ? undefined : Number(last.seq),
      reason: 'head',
      headHash: last?.hash ?? null,
    };
  return { ok: true, rows, headHash: last?.hash ?? null };
}
