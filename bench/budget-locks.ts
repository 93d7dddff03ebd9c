// Where a settlement should lock an offer's budget row (docs/decisions/0039-offer-budgets.md):
// the settlement's transaction shape on the bench's PostgreSQL, without the rest of the service, so
// that only the budget row's place differs. Each client runs, as fast as it can, what a settlement
// runs: lock its group's account, read (the budget, and the offer), then ONE write statement that
// locks the accounts it was left and moves their balances, then COMMIT. Variants:
//   none            no budget: the floor;
//   early           the budget row locked (FOR UPDATE) by the read, updated by the write: the
//                   row is held from the read to the commit, across a round trip and the client;
//   late            the service's: the guarded upsert of core/domain/budgets.ts in the write
//                   statement, after the accounts' locks: held from the write's end to the commit;
//   late-separate   the same upsert as its own statement after the write: one more round trip
//                   inside the hold;
//   sharded         the late upsert on one of 8 rows, picked by client: what sharding could gain at
//                   most (it ignores how shards would lend each other what is left at the edge).
// Two workloads: one issuer (every client's write also locks the merchant's one receivable, the
// hot row a settlement already has), and one issuer per client (distinct receivables: the budget,
// the offer's across every issuer, is the only row they share).
// Balances move in pairs that keep the trial balance at 0; everything is deleted afterwards.
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { Prisma } from '../prisma/generated/client';
import { budgetUseCte } from '../core/domain/budgets';

export const LOCK_VARIANTS = ['none', 'early', 'late', 'late-separate', 'sharded'] as const;
export type LockVariant = (typeof LOCK_VARIANTS)[number];
export const LOCK_WORKLOADS = ['one issuer', 'issuer per client'] as const;
export type LockWorkload = (typeof LOCK_WORKLOADS)[number];

const SHARDS = 8;
/** Shard rows borrow period keys no purchase uses (offer_budget.period must look like one). */
const shardKey = (shard: number) => `2000-${String(shard + 1).padStart(2, '0')}`;

export interface LockMeasurement {
  workload: LockWorkload;
  variant: LockVariant;
  /** Settlement-shaped transactions committed per second, over the measured seconds. */
  perSecond: number;
  transactions: number;
}

export interface LockResult {
  clients: number;
  seconds: number;
  rounds: number;
  measurements: LockMeasurement[];
}

interface Setup {
  runId: string;
  offerId: string;
  issuers: string[];
  merchantId: string;
}

async function setUp(db: pg.Client, clients: number): Promise<Setup> {
  const runId = randomBytes(4).toString('hex');
  const issuers = Array.from({ length: clients }, (_, c) => `iss_bench-locks-${runId}-${c}`);
  const merchantId = `mp_bench-locks-${runId}`;
  const offerId = `ofr_bench-locks-${runId}`;
  await db.query(
    `INSERT INTO issuer (id, name, environment) SELECT unnest($1::text[]), 'bench budget locks', 'sandbox'`,
    [issuers],
  );
  await db.query(`INSERT INTO merchant (id, name, category) VALUES ($1, 'bench budget locks', 'dining')`, [merchantId]);
  await db.query(
    `INSERT INTO offer (id, merchant_id, title, cashback_rate_bps, branded_rate_bps, starts_at, budget_minor)
     VALUES ($1, $2, 'bench', 100, 0, now(), 1000000000000000)`,
    [offerId, merchantId],
  );
  await db.query(`INSERT INTO offer_budget (offer_id, period, used_minor) SELECT $1, p, 0 FROM unnest($2::text[]) p`, [
    offerId,
    ['', ...Array.from({ length: SHARDS }, (_, s) => shardKey(s))],
  ]);
  // Each client its own group account, under every issuer; a receivable per issuer.
  await db.query(
    `INSERT INTO ledger_account (id, issuer_id, kind, chg_id, merchant_id, normal_side)
     SELECT i || ':chg_cashback:chg_' || c, i, 'chg_cashback', 'chg_' || c, NULL, 'credit'
       FROM unnest($1::text[]) i, generate_series(0, $2::int - 1) c
     UNION ALL
     SELECT i || ':merchant_receivable:' || $3, i, 'merchant_receivable', NULL, $3, 'debit' FROM unnest($1::text[]) i`,
    [issuers, clients, merchantId],
  );
  return { runId, offerId, issuers, merchantId };
}

async function tearDown(db: pg.Client, s: Setup): Promise<void> {
  await db.query(`DELETE FROM offer_budget WHERE offer_id = $1`, [s.offerId]);
  await db.query(`DELETE FROM offer WHERE id = $1`, [s.offerId]);
  await db.query(`DELETE FROM merchant WHERE id = $1`, [s.merchantId]);
  await db.query(`DELETE FROM ledger_account WHERE issuer_id = ANY($1::text[])`, [s.issuers]);
  await db.query(`DELETE FROM issuer WHERE id = ANY($1::text[])`, [s.issuers]);
}

/** One settlement-shaped transaction of client `c` (its own group account; its issuer's receivable). */
async function settle(db: pg.Client, s: Setup, variant: LockVariant, workload: LockWorkload, c: number) {
  const issuer = workload === 'one issuer' ? s.issuers[0] : s.issuers[c];
  const group = `${issuer}:chg_cashback:chg_${c}`;
  const receivable = `${issuer}:merchant_receivable:${s.merchantId}`;
  const period = variant === 'sharded' ? shardKey(c % SHARDS) : '';
  await db.query('BEGIN');
  try {
    await db.query('SELECT balance_minor FROM ledger_account WHERE id = $1 FOR UPDATE', [group]);
    const lockBudget = variant === 'early' ? 'FOR UPDATE' : '';
    const read = await db.query<{ used: string; limit: string }>(
      `SELECT (SELECT used_minor FROM offer_budget WHERE offer_id = $1 AND period = $2 ${lockBudget}) AS used,
              (SELECT budget_minor FROM offer WHERE id = $1) AS limit`,
      [s.offerId, period],
    );
    const usedMinor = Number(read.rows[0].used);
    const use = { offerId: s.offerId, periodKey: period, amountMinor: 1, usedMinor, cappedByBudget: false };
    const budget =
      variant === 'late' || variant === 'sharded'
        ? Prisma.sql`, ${budgetUseCte(use, new Date(), Prisma.sql`(SELECT count(*) FROM balances) >= 0`)}`
        : variant === 'early'
          ? Prisma.sql`, budget_use AS (UPDATE offer_budget SET used_minor = used_minor + 1 WHERE offer_id = ${s.offerId} AND period = '' RETURNING 1)`
          : Prisma.empty;
    const write = Prisma.sql`
      WITH write_locks AS (SELECT id FROM ledger_account WHERE id = ${receivable} FOR UPDATE),
           balances AS (UPDATE ledger_account SET balance_minor = balance_minor + 1
                         WHERE id IN (${group}, ${receivable}) AND (SELECT count(*) FROM write_locks) >= 0 RETURNING id)
           ${budget}
      SELECT (SELECT count(*) FROM balances) AS moved`;
    await db.query(write.text, write.values);
    if (variant === 'late-separate') {
      const separate = Prisma.sql`WITH ${budgetUseCte(use, new Date(), Prisma.sql`true`)} SELECT 1`;
      await db.query(separate.text, separate.values);
    }
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
}

async function measure(
  clients: pg.Client[],
  s: Setup,
  variant: LockVariant,
  workload: LockWorkload,
  seconds: number,
): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let transactions = 0;
  await Promise.all(
    clients.map(async (db, c) => {
      // Bounded by time and, as a safety net, by count.
      for (let n = 0; n < 10_000_000 && performance.now() < deadline; n++) {
        await settle(db, s, variant, workload, c);
        transactions++;
      }
    }),
  );
  return transactions;
}

export async function measureBudgetLocks(options: {
  databaseUrl: string;
  clients: number;
  seconds: number;
  rounds: number;
  log: (line: string) => void;
}): Promise<LockResult> {
  const admin = new pg.Client({ connectionString: options.databaseUrl });
  await admin.connect();
  const clients = await Promise.all(
    Array.from({ length: options.clients }, async () => {
      const client = new pg.Client({ connectionString: options.databaseUrl });
      await client.connect();
      return client;
    }),
  );
  const setup = await setUp(admin, options.clients);
  const totals = new Map<string, { transactions: number; seconds: number }>();
  try {
    for (let round = 0; round < options.rounds; round++) {
      // Each round in the other order: what drifts during the phase is spread over every variant.
      const order = round % 2 === 0 ? [...LOCK_VARIANTS] : [...LOCK_VARIANTS].reverse();
      for (const workload of LOCK_WORKLOADS)
        for (const variant of order) {
          const started = performance.now();
          const n = await measure(clients, setup, variant, workload, options.seconds);
          const took = (performance.now() - started) / 1000;
          const key = `${workload}/${variant}`;
          const t = totals.get(key) ?? { transactions: 0, seconds: 0 };
          totals.set(key, { transactions: t.transactions + n, seconds: t.seconds + took });
          options.log(`budget locks: round ${round + 1}, ${key}: ${(n / took).toFixed(0)}/s`);
        }
    }
  } finally {
    await tearDown(admin, setup);
    await Promise.all([admin, ...clients].map((c) => c.end()));
  }
  return {
    clients: options.clients,
    seconds: options.seconds,
    rounds: options.rounds,
    measurements: LOCK_WORKLOADS.flatMap((workload) =>
      LOCK_VARIANTS.map((variant) => {
        const t = totals.get(`${workload}/${variant}`)!;
        return { workload, variant, perSecond: t.transactions / t.seconds, transactions: t.transactions };
      }),
    ),
  };
}
