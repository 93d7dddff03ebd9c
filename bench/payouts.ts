// The payout phase (DESIGN.md, Quality bars, "Payouts"): a run over BENCH_PAYOUT_GROUPS groups
// (100,000) with payable cashback, its rate beside `pgbench -b tpcb-like` (8 clients, 30 s) on the
// same PostgreSQL in the same run (batched postings must beat one-row transactions), the Temporal
// actions it cost per 1,000 groups (Temporal Cloud's rules, bench/billable-actions.ts), and a
// second run over the same groups with the worker killed twice (SIGKILL) mid-run: no group paid
// twice, every group paid once.
// The groups and their cashback are written straight into the database, as balanced ledger
// postings (an earn_cashback transfer each, its entries and the accounts' balances), with no hold:
// building 100,000 purchases through the lifecycle would measure the lifecycle, for an hour. Each
// run is started through the API, as an issuer starts one.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { caller } from './fixtures';
import { costOfHistory } from './billable-actions';
import type { BenchStack } from './stack';

const run = promisify(execFile);

export interface PayoutResult {
  groups: number;
  /** Groups paid per second by the first run, from its start to its completion. */
  groupsPerSecond: number;
  seconds: number;
  /** pgbench tpcb-like, 8 clients, on the same server: transactions per second. */
  pgbenchTps: number;
  /** Billable Temporal actions of the first run's workflow (its continued runs included), per 1,000 groups. */
  actionsPerThousandGroups: number;
  /** The second run, with the worker killed twice mid-run. */
  killed: { groupsPaid: number; paidTwice: number; workerKills: number; seconds: number };
}

/** A sandbox issuer whose cashback is payable at once, and its API caller. */
async function payingIssuer(stack: BenchStack) {
  const operator = caller(stack.apiUrl, stack.operatorToken);
  const issuer = await operator('POST', '/admin/v1/issuers', { name: 'Bench payout issuer', environment: 'sandbox' });
  await operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { cashbackHoldDays: 0 });
  const { token } = await operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, { label: 'bench payouts' });
  const merchant = await operator('POST', '/admin/v1/merchants', { name: 'Bench payout merchant', category: 'dining' });
  return { issuerId: issuer.id as string, merchantId: merchant.id as string, token: token as string };
}

type PayingIssuer = Awaited<ReturnType<typeof payingIssuer>>;

/**
 * `groups` groups, each credited `amountMinor` of cashback by a balanced earn_cashback transfer
 * from the merchant's receivable; `round` keeps the keys of a second credit apart.
 */
async function creditCashback(
  db: pg.Client,
  p: { issuerId: string; merchantId: string; groups: number; amountMinor: number; round: number },
): Promise<void> {
  const receivable = `${p.issuerId}:merchant_receivable:${p.merchantId}`;
  await db.query('BEGIN');
  await db.query(
    `INSERT INTO cardholder_group (id, issuer_id, external_id, status)
     SELECT 'chg_' || gen_random_uuid(), $1, 'bench-payout-' || n, 'active' FROM generate_series(1, $2) n
     ON CONFLICT (issuer_id, external_id) DO NOTHING`,
    [p.issuerId, p.groups],
  );
  await db.query(
    `INSERT INTO ledger_account (id, issuer_id, kind, chg_id, merchant_id, normal_side, created_at)
     SELECT $1 || ':chg_cashback:' || g.id, $1, 'chg_cashback', g.id, NULL, 'credit', now()
       FROM cardholder_group g WHERE g.issuer_id = $1
     UNION ALL SELECT $2, $1, 'merchant_receivable', NULL, $3, 'debit', now()
     ON CONFLICT (id) DO NOTHING`,
    [p.issuerId, receivable, p.merchantId],
  );
  await db.query(
    `WITH credited AS (
       SELECT a.id AS account, gen_random_uuid()::text AS transfer
         FROM ledger_account a WHERE a.issuer_id = $1 AND a.kind = 'chg_cashback'),
     transfers AS (
       INSERT INTO ledger_transfer (id, issuer_id, idempotency_key, kind, debit_account_id, credit_account_id, amount_minor, created_at)
       SELECT c.transfer, $1, 'bench-payout:' || $5 || ':' || c.account, 'earn_cashback', $2, c.account, $3, now() FROM credited c
       RETURNING id, credit_account_id),
     entries AS (
       INSERT INTO ledger_entry (issuer_id, transfer_id, account_id, amount_minor, created_at)
       SELECT $1, t.id, t.credit_account_id, -$3::bigint, now() FROM transfers t
       UNION ALL SELECT $1, t.id, $2, $3, now() FROM transfers t)
     UPDATE ledger_account SET balance_minor = balance_minor + CASE WHEN id = $2 THEN $3 * $4::bigint ELSE $3 END
      WHERE issuer_id = $1 AND (kind = 'chg_cashback' OR id = $2)`,
    [p.issuerId, receivable, p.amountMinor, p.groups, p.round],
  );
  await db.query('COMMIT');
  await db.query('ANALYZE ledger_account');
}

/** pgbench's tpcb-like mix, 8 clients, on its own database of the same server: transactions/s. */
async function measurePgbench(databaseUrl: string, seconds: number): Promise<number> {
  const url = new URL(databaseUrl);
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS bench_pgbench');
  await admin.query('CREATE DATABASE bench_pgbench');
  await admin.end();
  url.pathname = '/bench_pgbench';
  const pgbench = process.env.PGBENCH ?? 'pgbench';
  await run(pgbench, ['-i', '-q', '-s', '10', url.toString()], { maxBuffer: 16 * 2 ** 20 });
  const { stdout } = await run(
    pgbench,
    ['-b', 'tpcb-like', '-c', '8', '-j', '2', '-n', '-T', String(seconds), url.toString()],
    {
      maxBuffer: 16 * 2 ** 20,
    },
  );
  const tps = /tps = ([0-9.]+)/.exec(stdout);
  if (!tps) throw new Error(`pgbench printed no tps:\n${stdout}`);
  return Number(tps[1]);
}

/** Starts a run through the API (with its Idempotency-Key) and waits for its end. */
async function payOut(
  stack: BenchStack,
  issuer: PayingIssuer,
  key: string,
  whilePaying?: (paidSoFar: number) => Promise<void>,
): Promise<{ id: string; seconds: number; groupCount: number }> {
  const started = Date.now();
  const res = await fetch(`${stack.apiUrl}/api/v2/payouts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${issuer.token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: '{}',
  });
  if (res.status !== 202) throw new Error(`POST /api/v2/payouts: HTTP ${res.status} ${await res.text()}`);
  const { id } = (await res.json()) as { id: string };
  const call = caller(stack.apiUrl, issuer.token);
  // Bounded: 30 minutes is far beyond any run the phase starts.
  for (let i = 0; i < 3600; i++) {
    const payout = await call('GET', `/api/v2/payouts/${id}`);
    if (payout.status !== 'processing') {
      if (payout.status !== 'completed') throw new Error(`payout ${id} ended ${payout.status}`);
      return { id, seconds: (Date.now() - started) / 1000, groupCount: payout.groupCount };
    }
    await whilePaying?.(payout.groupCount);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`payout ${id} did not finish in 30 minutes`);
}

/** Billable actions of the run's workflow and every run it continued as. */
export async function actionsOf(temporalAddress: string, workflowId: string): Promise<number> {
  const connection = await Connection.connect({ address: temporalAddress });
  try {
    const client = new Client({ connection });
    let total = 0;
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
      total += costOfHistory(JSON.parse(historyToJSON(history))).actions;
    }
    return total;
  } finally {
    await connection.close();
  }
}

/** Groups the payout paid more than once (its transfers per group), and groups it paid. */
async function paidCounts(db: pg.Client, payoutId: string): Promise<{ paid: number; twice: number }> {
  const { rows } = await db.query<{ paid: number; twice: number }>(
    `SELECT count(*)::int AS paid, count(*) FILTER (WHERE n > 1)::int AS twice FROM (
       SELECT substring(idempotency_key from length($1) + 1) AS chg, count(*) AS n
         FROM ledger_transfer WHERE kind = 'payout_cashback' AND idempotency_key LIKE $1 || '%' GROUP BY 1) x`,
    [`payout:${payoutId}:`],
  );
  return rows[0];
}

export async function measurePayouts(
  stack: BenchStack,
  options: { groups: number; pgbenchSeconds: number; log: (line: string) => void },
): Promise<PayoutResult> {
  const { groups, log } = options;
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  try {
    const issuer = await payingIssuer(stack);
    log(`payouts: ${groups} groups credited with payable cashback`);
    await creditCashback(db, { ...issuer, groups, amountMinor: 1250, round: 1 });
    log(`payouts: pgbench tpcb-like, 8 clients, ${options.pgbenchSeconds} s`);
    const pgbenchTps = await measurePgbench(stack.databaseUrl, options.pgbenchSeconds);
    log(`payouts: pgbench ${pgbenchTps.toFixed(0)} tps; the first run`);
    const first = await payOut(stack, issuer, 'bench-payout-1');
    const actions = await actionsOf(stack.temporalAddress, `payout/${issuer.issuerId}/${first.id}`);
    log(`payouts: ${first.groupCount} groups in ${first.seconds.toFixed(1)} s, ${actions} actions`);

    await creditCashback(db, { ...issuer, groups, amountMinor: 700, round: 2 });
    // Killed twice: once a tenth of the groups are paid, again past half.
    const killAt = [Math.floor(groups / 10), Math.floor(groups / 2)];
    let kills = 0;
    const second = await payOut(stack, issuer, 'bench-payout-2', async (paid) => {
      if (kills < killAt.length && paid >= killAt[kills]) {
        kills += 1;
        log(`payouts: killing the worker (SIGKILL) at ${paid} groups paid`);
        await stack.killWorker();
      }
    });
    const counts = await paidCounts(db, second.id);
    log(`payouts: second run ${counts.paid} groups, ${counts.twice} paid twice, worker killed ${kills} times`);
    return {
      groups,
      groupsPerSecond: first.groupCount / first.seconds,
      seconds: first.seconds,
      pgbenchTps,
      actionsPerThousandGroups: (actions / first.groupCount) * 1000,
      killed: { groupsPaid: counts.paid, paidTwice: counts.twice, workerKills: kills, seconds: second.seconds },
    };
  } finally {
    await db.end();
  }
}
