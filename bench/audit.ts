// Phase: the audit trail (DESIGN.md, Quality bars, Operators). Three figures:
//   - an audited mutating operator call (PATCH a merchant's name, root, one client after another):
//     its p50 and p99 as an operator sees them;
//   - what the trail adds to such a call, measured on the same PostgreSQL: the row the handler
//     writes (the chain's trigger: the head locked, the hash computed, the head moved) and the
//     wrapper's closing statement (INSERT ... WHERE NOT EXISTS, which finds the row), one after the
//     other as a call runs them; its p99 is the bar (<= 5 ms). The same call without the trail
//     cannot run on this build: nothing turns the trail off, by design (decision 0058);
//   - a chain of `rows` more rows (hashed as the database hashes them) verified by
//     core/domain/audit-chain.ts, the code behind `npm run audit:verify` (<= 60 s for 1,000,000).
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { caller } from './fixtures';
import { rowHash, verifyAuditChain } from '../core/domain/audit-chain';

export interface AuditResult {
  calls: number;
  callP50Ms: number;
  callP99Ms: number;
  trailSamples: number;
  trailP50Ms: number;
  trailP99Ms: number;
  rows: number;
  seedSeconds: number;
  verifySeconds: number;
  verifiedRows: number;
  ok: boolean;
}

interface Options {
  apiUrl: string;
  operatorToken: string;
  databaseUrl: string;
  rows: number;
  log: (line: string) => void;
}

const TRAIL_SAMPLES = 2_000;
/** How long audited calls are made, one after another. */
const CALL_SECONDS = 15;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

export async function measureAudit(o: Options): Promise<AuditResult> {
  const operator = caller(o.apiUrl, o.operatorToken);
  const merchant = (await operator('POST', '/admin/v1/merchants', {
    name: `Bench audit ${randomUUID()}`,
    category: 'dining',
  })) as {
    id: string;
  };
  const calls: number[] = [];
  const until = performance.now() + CALL_SECONDS * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    await operator('PATCH', `/admin/v1/merchants/${merchant.id}`, { name: `Bench audit ${calls.length}` });
    calls.push(performance.now() - started);
  }
  calls.sort((a, b) => a - b);
  o.log(`audit: ${calls.length} audited calls, p99 ${percentile(calls, 0.99).toFixed(1)} ms`);

  const db = new pg.Client({ connectionString: o.databaseUrl });
  await db.connect();
  try {
    const trail = await trailCost(db);
    o.log(`audit: the trail's statements per call, p99 ${percentile(trail, 0.99).toFixed(2)} ms`);
    const seedStarted = performance.now();
    await seedChain(db, o.rows);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    o.log(`audit: ${o.rows} rows chained in ${seedSeconds.toFixed(1)} s`);
    const pool = new pg.Pool({ connectionString: o.databaseUrl, max: 1 });
    try {
      const started = performance.now();
      const verdict = await verifyAuditChain(pool);
      const verifySeconds = (performance.now() - started) / 1000;
      o.log(`audit: ${verdict.rows} rows verified in ${verifySeconds.toFixed(1)} s (ok: ${verdict.ok})`);
      return {
        calls: calls.length,
        callP50Ms: percentile(calls, 0.5),
        callP99Ms: percentile(calls, 0.99),
        trailSamples: trail.length,
        trailP50Ms: percentile(trail, 0.5),
        trailP99Ms: percentile(trail, 0.99),
        rows: o.rows,
        seedSeconds,
        verifySeconds,
        verifiedRows: verdict.rows,
        ok: verdict.ok,
      };
    } finally {
      await pool.end();
    }
  } finally {
    await db.end();
  }
}

const SEED_BATCH = 10_000;

/**
 * `rows` more rows on the chain, hashed here by the verifier's own function and inserted with the
 * chain's trigger switched off (the bench owns the database), then the head moved to the last.
 * Through the trigger, one statement of a million rows updates the head a million times in one
 * transaction, each update walking the versions before it: hours, where the service's calls each
 * commit their one row.
 */
async function seedChain(db: pg.Client, rows: number): Promise<void> {
  const head = await db.query<{ seq: string; hash: string | null }>(
    'SELECT seq::text, hash FROM audit_chain_head WHERE id = 1',
  );
  let seq = BigInt(head.rows[0].seq);
  let prev = head.rows[0].hash;
  const atMs = Date.now();
  await db.query('ALTER TABLE operator_audit_log DISABLE TRIGGER operator_audit_log_chain');
  try {
    for (let done = 0; done < rows; done += SEED_BATCH) {
      const batch = {
        ids: [] as string[],
        seqs: [] as string[],
        details: [] as string[],
        prevs: [] as (string | null)[],
        hashes: [] as string[],
      };
      for (let i = 0; i < Math.min(SEED_BATCH, rows - done); i++) {
        seq += 1n;
        // PostgreSQL's text of the jsonb the row stores: what the verifier reads back.
        const row = {
          seq: String(seq),
          id: `aud_${randomUUID()}`,
          at_ms: String(atMs),
          actor: 'bench',
          roles: null,
          action: 'bench.seed',
          target_id: null,
          outcome: null,
          status_code: null,
          request_id: null,
          ip: null,
          user_agent: null,
          details: `{"n": ${done + i}}`,
          prev_hash: prev,
        };
        const hash = rowHash(row);
        batch.ids.push(row.id);
        batch.seqs.push(row.seq);
        batch.details.push(row.details);
        batch.prevs.push(prev);
        batch.hashes.push(hash);
        prev = hash;
      }
      await db.query(
        `INSERT INTO operator_audit_log (id, seq, actor, action, details, created_at, prev_hash, hash)
         SELECT id, seq::bigint, 'bench', 'bench.seed', details::jsonb, to_timestamp($6::bigint / 1000.0), prev, hash
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS r(id, seq, details, prev, hash)`,
        [batch.ids, batch.seqs, batch.details, batch.prevs, batch.hashes, atMs],
      );
    }
    await db.query('UPDATE audit_chain_head SET seq = $1::bigint, hash = $2 WHERE id = 1', [String(seq), prev]);
  } finally {
    await db.query('ALTER TABLE operator_audit_log ENABLE TRIGGER operator_audit_log_chain');
  }
}

/** The trail's two statements of one call, one after the other, each sample in its own transaction. */
async function trailCost(db: pg.Client): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < TRAIL_SAMPLES; i++) {
    const id = `aud_${randomUUID()}`;
    const started = performance.now();
    await db.query(
      `INSERT INTO operator_audit_log (id, actor, action, target_id, details, created_at, operator_roles, outcome,
                                       request_id, ip, user_agent)
       VALUES ($1, 'bench', 'merchant.update', NULL, '{"name":"Bench"}', now(), ARRAY['catalogue'], 'done', $2, '127.0.0.1', 'bench')`,
      [id, `req_${randomUUID()}`],
    );
    await db.query(
      `INSERT INTO operator_audit_log (id, actor, action, details, created_at, outcome, status_code)
       SELECT $1, 'bench', 'merchant.update', '{}', now(), 'done', 200
        WHERE NOT EXISTS (SELECT 1 FROM operator_audit_log WHERE id = $1)`,
      [id],
    );
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}
