// Phase: the reward notices scan (activities/notices), as the hourly ExpireGrants run does it.
// A bench issuer of its own, whose webhook endpoint (the bench's receiver) subscribes to the
// cardholder reward events, gets N branded grants whose reward_available is due now (available
// an hour ago, expiring in 90 days: one record each, no expiring notice yet), seeded with
// set-based SQL and a balanced ledger (an earn transfer and its two entries each). Then the
// real ExpireGrants workflow runs once through Temporal over every issuer, timed from its start
// to its result; its history is counted by Temporal Cloud's rules (bench/billable-actions.ts)
// and PostgreSQL counts the statements meanwhile (pg_stat_statements, on for this run only).
// A second run, and the scan's activity called again at the first run's own instant, must
// write nothing. The hourly schedule is paused throughout so it cannot share the work, and a
// warm-up run first clears the notices other phases' grants have due.
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import pg from 'pg';
import { costOfHistory, type HistoryCost } from './billable-actions';
import { caller } from './fixtures';
import { classifyStatements, scanInstant, type StatementCount } from './notice-figures';
import { accounts } from '../core/ledger';
import { createLogger } from '../core/logger';
import { createDb } from '../prisma/client';
import { sendDueRewardNotices } from '../activities/notices';
import { EXPIRE_GRANTS_SCHEDULE_ID } from '../worker/schedules';
import type { ExpireGrantsResult } from '../workflows/expire-grants-contract';

const NOTICE_TYPES = ['reward_available', 'reward_expiring'];

export interface NoticeOptions {
  apiUrl: string;
  operatorToken: string;
  databaseUrl: string;
  temporalAddress: string;
  receiverUrl: string;
  /** A merchant of the bench's (the grants' merchant). */
  merchantId: string;
  grants: number;
  runId: string;
  timeoutMs: number;
}

export interface ScanRun {
  seconds: number;
  result: ExpireGrantsResult;
  cost: HistoryCost;
  /** The instant the run scanned at (its activities' `atMs`). */
  atMs: number;
}

export interface NoticeResult {
  grants: number;
  recorded: number;
  eventsPerSecond: number;
  first: ScanRun;
  statements: StatementCount;
  second: { run: ScanRun; sameInstantGrants: number; sameInstantRecorded: number };
  /** Records delivered to the receiver when the phase ended (not part of the figures). */
  delivered: number;
}

export async function measureNoticeScan(options: NoticeOptions): Promise<NoticeResult> {
  const { issuerId, chgId } = await noticeIssuer(options);
  const connection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection });
  const db = new pg.Client({ connectionString: options.databaseUrl });
  await db.connect();
  const schedule = client.schedule.getHandle(EXPIRE_GRANTS_SCHEDULE_ID);
  await schedule.pause('bench: the notices phase runs ExpireGrants itself');
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    for (let warmUp = 0; ; warmUp++) {
      const { result } = await runExpireGrants(client, `bench-notices-${options.runId}-warm-${warmUp}`);
      if (!result.noticeGrants) break;
      if (warmUp >= 10) throw new Error('notices: other grants keep falling due; cannot measure the scan alone');
    }
    await seedDueGrants(db, { ...options, issuerId, chgId });
    const { first, statements } = await countingStatements(db, () =>
      runExpireGrants(client, `bench-notices-${options.runId}-first`),
    );
    const recorded = await recordsOf(db, issuerId);
    check(first.result.noticeGrants === options.grants, `the scan handled ${first.result.noticeGrants} grants`);
    check(first.result.noticesRecorded === recorded, `the run says ${first.result.noticesRecorded} records`);
    check(recorded === options.grants, `${recorded} records written for ${options.grants} due grants`);
    const second = await secondScan(client, options, first.atMs);
    check((await recordsOf(db, issuerId)) === recorded, 'the second scan wrote records');
    const delivered = await waitForDeliveries(db, issuerId, recorded, options.timeoutMs);
    const eventsPerSecond = recorded / first.seconds;
    return { grants: options.grants, recorded, eventsPerSecond, first, statements, second, delivered };
  } finally {
    await schedule.unpause('bench: notices phase over').catch(() => undefined);
    await db.end();
    await connection.close();
  }
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`notices: ${what}`);
}

/** A sandbox issuer with one group, and a webhook endpoint at the bench's receiver. */
async function noticeIssuer(options: NoticeOptions): Promise<{ issuerId: string; chgId: string }> {
  const operator = caller(options.apiUrl, options.operatorToken);
  const issuer = await operator('POST', '/admin/v1/issuers', { name: 'Bench notices issuer', environment: 'sandbox' });
  const { token } = await operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, { label: 'bench-notices' });
  const call = caller(options.apiUrl, token);
  const group = await call('POST', '/api/v2/chg', {
    externalId: `bench-notices-${options.runId}`,
    cardholders: [
      {
        externalId: `bench-notices-ch-${options.runId}`,
        cards: [{ externalId: `bench-notices-card-${options.runId}`, last4: '4242', network: 'visa' }],
      },
    ],
  });
  await call('PUT', '/api/v2/webhook-endpoint', { url: options.receiverUrl, enabledTypes: NOTICE_TYPES });
  return { issuerId: issuer.id, chgId: group.id };
}

/**
 * N grants of 1.00 each, reward_available due (next_notice_at = available_at, an hour ago),
 * each funded by its own earn_branded transfer with both entries, and the two accounts'
 * balances raised by the total: the ledger stays balanced. No reward events (the scan reads
 * none). One transaction, set-based; ANALYZE after, as autovacuum would have by the hour.
 */
async function seedDueGrants(db: pg.Client, o: NoticeOptions & { issuerId: string; chgId: string }): Promise<void> {
  const receivable = accounts.merchantReceivable(o.issuerId, o.merchantId).id;
  const branded = accounts.chgBranded(o.issuerId, o.chgId, o.merchantId).id;
  const prefix = `bench-notices-${o.runId}-`;
  await db.query('BEGIN');
  try {
    await db.query(
      `INSERT INTO ledger_account (id, issuer_id, kind, chg_id, merchant_id, normal_side, balance_minor)
       VALUES ($4, $1, 'merchant_receivable', NULL, $2, 'debit', 100 * $6::bigint),
              ($5, $1, 'chg_branded', $3, $2, 'credit', 100 * $6::bigint)`,
      [o.issuerId, o.merchantId, o.chgId, receivable, branded, o.grants],
    );
    await db.query(
      `WITH n AS (SELECT generate_series(1, $7::int) AS n),
       transfer AS (
         INSERT INTO ledger_transfer (id, issuer_id, idempotency_key, kind, debit_account_id, credit_account_id, amount_minor)
         SELECT $6::text || 'xfer-' || n, $1, $6::text || 'earn-' || n, 'earn_branded', $4, $5, 100 FROM n RETURNING id),
       entry AS (
         INSERT INTO ledger_entry (issuer_id, transfer_id, account_id, amount_minor)
         SELECT $1, t.id, e.account_id, e.amount_minor FROM transfer t
          CROSS JOIN (VALUES ($4, 100::bigint), ($5, -100::bigint)) AS e(account_id, amount_minor))
       INSERT INTO reward_grant (id, issuer_id, chg_id, merchant_id, account_id, earn_transfer_id, amount_minor,
                                 remaining_minor, available_at, expires_at, next_notice_at)
       SELECT 'grt_' || id, $1, $3, $2, $5, id, 100, 100, now() - interval '1 hour', now() + interval '90 days',
              now() - interval '1 hour'
         FROM transfer`,
      [o.issuerId, o.merchantId, o.chgId, receivable, branded, prefix, o.grants],
    );
    await db.query('COMMIT');
  } catch (err) {
    await db.query('ROLLBACK');
    throw err;
  }
  await db.query('ANALYZE reward_grant, webhook, ledger_transfer, ledger_entry');
}

const TASK_QUEUE = process.env.TEMPORAL_TASK_QUEUE || 'rewards';

/** One ExpireGrants run over every issuer, as the schedule starts it; timed start to result. */
async function runExpireGrants(client: Client, workflowId: string): Promise<ScanRun> {
  const startedAt = performance.now();
  const handle = await client.workflow.start('expireGrants', { taskQueue: TASK_QUEUE, workflowId, args: [] });
  const result = (await handle.result()) as ExpireGrantsResult;
  const seconds = (performance.now() - startedAt) / 1000;
  const history = JSON.parse(historyToJSON(await handle.fetchHistory()));
  return { seconds, result, cost: costOfHistory(history), atMs: scanInstant(history) };
}

/**
 * A second ExpireGrants run (a moment later), then the scan's activity itself at the first
 * run's instant, in this process on its own connections: both must find nothing to write.
 */
async function secondScan(client: Client, options: NoticeOptions, atMs: number) {
  const run = await runExpireGrants(client, `bench-notices-${options.runId}-second`);
  check(run.result.noticesRecorded === 0, `a second run wrote ${run.result.noticesRecorded} records`);
  const db = createDb(options.databaseUrl, 2);
  try {
    const logger = createLogger('warn', 'bench-notices');
    const again = await sendDueRewardNotices({ db, logger }, { atMs, batchSize: 200 });
    check(again.recorded === 0, `the scan at the first run's instant wrote ${again.recorded} records`);
    return { run, sameInstantGrants: again.grants, sameInstantRecorded: again.recorded };
  } finally {
    await db.$disconnect();
  }
}

async function recordsOf(db: pg.Client, issuerId: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'SELECT count(*) AS n FROM webhook WHERE issuer_id = $1 AND type = ANY($2)',
    [issuerId, NOTICE_TYPES],
  );
  return Number(rows[0].n);
}

/** Lets the relay finish delivering, so the next phase does not measure it; never fails. */
async function waitForDeliveries(db: pg.Client, issuerId: string, records: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM webhook_delivery WHERE issuer_id = $1 AND status = 'delivered'`,
      [issuerId],
    );
    const delivered = Number(rows[0].n);
    if (delivered >= records || Date.now() > deadline) return delivered;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Runs `run` with pg_stat_statements counting top-level statements (loaded idle by
 * bench/stack.ts), from a reset just before to a read just after.
 */
async function countingStatements(db: pg.Client, run: () => Promise<ScanRun>) {
  const track = async (value: 'top' | 'none') => {
    await db.query(`ALTER SYSTEM SET pg_stat_statements.track = '${value}'`);
    await db.query('SELECT pg_reload_conf()');
    // Each backend reads the new setting before its next command; this one too.
    await new Promise((r) => setTimeout(r, 200));
    const { rows } = await db.query<{ t: string }>("SELECT current_setting('pg_stat_statements.track') AS t");
    check(rows[0].t === value, `pg_stat_statements.track is ${rows[0].t}, not ${value}`);
  };
  await track('top');
  try {
    await db.query('SELECT pg_stat_statements_reset()');
    const first = await run();
    const { rows } = await db.query<{ query: string; calls: string }>(
      `SELECT query, calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return { first, statements: classifyStatements(rows.map((r) => ({ query: r.query, calls: Number(r.calls) }))) };
  } finally {
    await track('none');
  }
}
