// Phase: merchant statements (DESIGN.md, Quality bars, Statements): a month of ledger transfers
// billed by the real statement run (POST /admin/v1/statements, its workflow on the bench's worker),
// timed from the request to the run's completion. The month is seeded by set-based SQL, two months
// back so that no other phase's postings fall in it: issuers x merchants receivables and the
// issuers' other accounts, and the transfers a funded programme posts (earns, the issuer's shares,
// commission and their returns, clawbacks; adjustments and payouts that touch no receivable), each
// with its two entries, ordered as one writer would commit them, and the accounts' balances from
// those entries (the trial balance stays 0). Then ANALYZE, as autovacuum would have run by the end
// of a month. The check: one statement per receivable, their totals equal to the receivables'
// movement in the month to the minor unit, every transfer on one.
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { caller } from './fixtures';
import { periodBounds, periodOf } from '../core/rules/statements';

export interface StatementResult {
  period: string;
  transfers: number;
  receivableTransfers: number;
  issuers: number;
  merchants: number;
  seedSeconds: number;
  /** From POST /admin/v1/statements to the run's completion. */
  seconds: number;
  statements: number;
  totalDueMinor: number;
  /** |billed - the receivables' movement|: the bar is 0. */
  differenceMinor: number;
  /** Transfers on the statements less the receivables' transfers of the month: 0. */
  transferCountDifference: number;
}

interface Options {
  apiUrl: string;
  operatorToken: string;
  databaseUrl: string;
  transfers: number;
  issuers: number;
  merchants: number;
  timeoutMs: number;
  log: (line: string) => void;
}

/**
 * Twenty transfers per block, on one (issuer, merchant) pair and one of its groups, with fixed
 * amounts so that no group's cashback goes below zero: 15 of 20 move the receivable.
 */
const BLOCK: Array<{ kind: string; debit: string; credit: string; amount: number }> = [
  ...Array.from({ length: 8 }, () => ({ kind: 'earn_cashback', debit: 'recv', credit: 'chg', amount: 500 })),
  ...Array.from({ length: 2 }, () => ({
    kind: 'issuer_share_cashback',
    debit: 'funding',
    credit: 'recv',
    amount: 125,
  })),
  ...Array.from({ length: 2 }, () => ({ kind: 'commission_charged', debit: 'recv', credit: 'commission', amount: 30 })),
  { kind: 'commission_returned', debit: 'commission', credit: 'recv', amount: 10 },
  { kind: 'clawback_cashback', debit: 'chg', credit: 'recv', amount: 200 },
  { kind: 'issuer_share_returned', debit: 'recv', credit: 'funding', amount: 50 },
  ...Array.from({ length: 3 }, () => ({ kind: 'adjust_credit_cashback', debit: 'adjust', credit: 'chg', amount: 100 })),
  ...Array.from({ length: 2 }, () => ({ kind: 'payout_cashback', debit: 'chg', credit: 'payable', amount: 300 })),
];
const GROUPS_PER_ISSUER = 100;

export async function measureStatements(o: Options): Promise<StatementResult> {
  const now = new Date();
  const period = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 15)));
  const db = new pg.Client({ connectionString: o.databaseUrl });
  await db.connect();
  try {
    const seedStarted = performance.now();
    const seeded = await seed(db, o, period);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    o.log(`statements: seeded ${o.transfers} transfers of ${period} in ${seedSeconds.toFixed(1)} s; billing`);
    const operator = caller(o.apiUrl, o.operatorToken);
    const started = performance.now();
    const run = await fetch(`${o.apiUrl}/admin/v1/statements`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${o.operatorToken}`,
        'content-type': 'application/json',
        'idempotency-key': `bench-${randomBytes(8).toString('hex')}`,
      },
      body: JSON.stringify({ period }),
    });
    if (run.status !== 202) throw new Error(`statement run: HTTP ${run.status} ${await run.text()}`);
    const runId = ((await run.json()) as { id: string }).id;
    let done: { status: string; statementCount: number };
    for (;;) {
      done = await operator('GET', `/admin/v1/statement-runs/${runId}`);
      if (done.status !== 'processing') break;
      if (performance.now() - started > o.timeoutMs) throw new Error(`statement run ${runId} still processing`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    if (done.status !== 'completed') throw new Error(`statement run ${runId} ${done.status}`);
    const check = await checkStatements(db, runId, seeded.issuers, period);
    return {
      period,
      transfers: o.transfers,
      receivableTransfers: check.expectedTransfers,
      issuers: o.issuers,
      merchants: o.merchants,
      seedSeconds,
      seconds,
      statements: check.statements,
      totalDueMinor: check.billed,
      differenceMinor: Math.abs(check.billed - check.movement),
      transferCountDifference: check.billedTransfers - check.expectedTransfers,
    };
  } finally {
    await db.end();
  }
}

async function seed(db: pg.Client, o: Options, period: string): Promise<{ issuers: string[] }> {
  const run = randomBytes(4).toString('hex');
  const { start, end } = periodBounds(period);
  const issuers = Array.from({ length: o.issuers }, (_, i) => `iss_${run}-0000-7000-8000-${hex12(i)}`);
  const merchants = Array.from({ length: o.merchants }, (_, m) => `mp_${run}-0000-7000-8000-${hex12(m)}`);
  await db.query(
    `INSERT INTO issuer (id, name, environment) SELECT unnest($1::text[]), 'bench statements', 'sandbox'`,
    [issuers],
  );
  await db.query(`INSERT INTO merchant (id, name, category) SELECT unnest($1::text[]), 'bench statements', 'dining'`, [
    merchants,
  ]);
  await seedAccounts(db, run, issuers, merchants);
  await seedTransfers(db, { run, issuers, merchants, transfers: o.transfers, start, end });
  await db.query(
    `UPDATE ledger_account a SET balance_minor = CASE a.normal_side WHEN 'debit' THEN s.total ELSE -s.total END
       FROM (SELECT account_id, sum(amount_minor) AS total FROM ledger_entry WHERE issuer_id = ANY($1::text[]) GROUP BY account_id) s
      WHERE s.account_id = a.id`,
    [issuers],
  );
  await db.query('ANALYZE ledger_account, ledger_transfer, ledger_entry');
  return { issuers };
}

/** Each issuer's receivable and commission at each merchant, its funding, adjustment and payable accounts, its groups. */
async function seedAccounts(db: pg.Client, run: string, issuers: string[], merchants: string[]): Promise<void> {
  await db.query(
    `INSERT INTO ledger_account (id, issuer_id, kind, chg_id, merchant_id, normal_side)
     SELECT i || ':' || k.kind || ':' || m, i, k.kind, NULL, m, k.side
       FROM unnest($1::text[]) i, unnest($2::text[]) m, (VALUES ('merchant_receivable', 'debit'), ('commission', 'credit')) k(kind, side)
     UNION ALL
     SELECT i || ':' || k.kind, i, k.kind, NULL, NULL, k.side
       FROM unnest($1::text[]) i, (VALUES ('issuer_funding', 'debit'), ('issuer_adjustments', 'debit'), ('issuer_payable', 'credit')) k(kind, side)
     UNION ALL
     SELECT i || ':chg_cashback:chg_' || $3 || '-' || g, i, 'chg_cashback', 'chg_' || $3 || '-' || g, NULL, 'credit'
       FROM unnest($1::text[]) i, generate_series(0, $4::int - 1) g`,
    [issuers, merchants, run, GROUPS_PER_ISSUER],
  );
}

/** The month's transfers and their entries, in the order one writer would have committed them. */
async function seedTransfers(
  db: pg.Client,
  p: { run: string; issuers: string[]; merchants: string[]; transfers: number; start: Date; end: Date },
): Promise<void> {
  const { run } = p;
  // One row per transfer: its pair, group, place in its block and time in the month.
  const generator = `
    SELECT n, b.kind, b.debit, b.credit, b.amount,
           ($1::text[])[1 + (n / 20) % $3] AS issuer, ($2::text[])[1 + (n / 20 / $3) % $4] AS merchant,
           (n / 20) % ${GROUPS_PER_ISSUER} AS grp,
           $6::timestamptz + (($7::timestamptz - $6::timestamptz) * n / $5) AS at
      FROM generate_series(0, $5::int - 1) n
      JOIN unnest($8::text[], $9::text[], $10::text[], $11::bigint[]) WITH ORDINALITY AS b(kind, debit, credit, amount, p)
        ON b.p = n % 20 + 1`;
  const account = (role: string) => `CASE ${role}
      WHEN 'recv' THEN g.issuer || ':merchant_receivable:' || g.merchant
      WHEN 'commission' THEN g.issuer || ':commission:' || g.merchant
      WHEN 'chg' THEN g.issuer || ':chg_cashback:chg_${run}-' || g.grp
      WHEN 'funding' THEN g.issuer || ':issuer_funding'
      WHEN 'adjust' THEN g.issuer || ':issuer_adjustments'
      WHEN 'payable' THEN g.issuer || ':issuer_payable' END`;
  const params = [
    p.issuers,
    p.merchants,
    p.issuers.length,
    p.merchants.length,
    p.transfers,
    p.start,
    p.end,
    BLOCK.map((b) => b.kind),
    BLOCK.map((b) => b.debit),
    BLOCK.map((b) => b.credit),
    BLOCK.map((b) => String(b.amount)),
  ];
  // Seeding only: the rows are consistent by construction, so their foreign keys go unchecked.
  await db.query('SET session_replication_role = replica');
  try {
    await db.query(
      `INSERT INTO ledger_transfer (id, issuer_id, idempotency_key, kind, debit_account_id, credit_account_id, amount_minor, created_at)
       SELECT '${run}-0000-7000-8000-' || lpad(to_hex(g.n), 12, '0'), g.issuer, 'bench-statements:${run}:' || g.n, g.kind,
              ${account('g.debit')}, ${account('g.credit')}, g.amount, g.at
         FROM (${generator}) g`,
      params,
    );
    // In transfer order, debit then credit: the ids a committing writer would have taken.
    await db.query(
      `INSERT INTO ledger_entry (issuer_id, transfer_id, account_id, amount_minor, created_at)
       SELECT g.issuer, '${run}-0000-7000-8000-' || lpad(to_hex(g.n), 12, '0'), s.account, s.amount, g.at
         FROM (${generator}) g
         CROSS JOIN LATERAL (VALUES (1, ${account('g.debit')}, g.amount), (2, ${account('g.credit')}, -g.amount)) s(side, account, amount)
        ORDER BY g.n, s.side`,
      params,
    );
  } finally {
    await db.query('SET session_replication_role = DEFAULT');
  }
}

const hex12 = (n: number) => n.toString(16).padStart(12, '0');

async function checkStatements(db: pg.Client, runId: string, issuers: string[], period: string) {
  const { start, end } = periodBounds(period);
  const { rows } = await db.query<{
    statements: string;
    billed: string;
    billedTransfers: string;
    movement: string;
    expectedTransfers: string;
  }>(
    `SELECT (SELECT count(*) FROM statement WHERE run_id = $1 AND issuer_id = ANY($2::text[])) AS statements,
            (SELECT coalesce(sum(total_due_minor), 0) FROM statement WHERE run_id = $1 AND issuer_id = ANY($2::text[])) AS billed,
            (SELECT coalesce(sum(transfer_count), 0) FROM statement WHERE run_id = $1 AND issuer_id = ANY($2::text[])) AS "billedTransfers",
            (SELECT coalesce(sum(e.amount_minor), 0) FROM ledger_entry e JOIN ledger_account a ON a.id = e.account_id
              WHERE a.kind = 'merchant_receivable' AND a.issuer_id = ANY($2::text[]) AND e.created_at >= $3 AND e.created_at < $4) AS movement,
            (SELECT count(*) FROM ledger_entry e JOIN ledger_account a ON a.id = e.account_id
              WHERE a.kind = 'merchant_receivable' AND a.issuer_id = ANY($2::text[]) AND e.created_at >= $3 AND e.created_at < $4) AS "expectedTransfers"`,
    [runId, issuers, start, end],
  );
  const r = rows[0];
  return {
    statements: Number(r.statements),
    billed: Number(r.billed),
    billedTransfers: Number(r.billedTransfers),
    movement: Number(r.movement),
    expectedTransfers: Number(r.expectedTransfers),
  };
}
