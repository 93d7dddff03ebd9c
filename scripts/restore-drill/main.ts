// `npm run restore-drill`: the procedure of docs/operating/backup-and-restore.md, run end to end on
// this machine, and checked. CI runs it (.ci/run).
//
//  1. A running stack: PostgreSQL (an installed one, with its own pg_dump), the Temporal dev
//     server, the API and the worker as processes, an issuer sending purchases (settlements, and
//     authorizations settled later or left open) and a webhook receiver.
//  2. Under that traffic, a backup: pg_dump in a snapshot exported for it, the ledger's balances
//     read in the same snapshot. The worker is paused for two seconds before it, so that the backup
//     certainly holds purchases accepted but not processed yet. Traffic goes on after it.
//  3. The source is stopped. The dump is restored into a fresh PostgreSQL, migrated (nothing to
//     apply), and its ledger compared with the source's at the backup's point: every account's
//     balance equal, the trial balance 0, the ledger's invariants holding.
//  4. The service starts on it with a new Temporal server (the drill's environment shares nothing
//     with the source's), `npm run admin -- recover:in-flight` hands over what was in flight,
//     and the issuer sends again everything acknowledged since the backup began and the
//     settlements of the authorizations it left open.
//  5. Checked: every event the issuer sent is stored and has its outcome, each purchase in flight at
//     the backup finished, nothing was posted twice, every qualified_settlement delivered, the
//     trial balance 0 and the invariants holding. A table of it is printed
//     (docs/operating/runbook.md, "Restore drill"); the exit code is 1 if any check failed.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate } from '../../prisma/migrate';
import { createDb } from '../../prisma/client';
import { ledgerInvariants } from '../../core/domain/ledger';
import { generateKeyRingEntry } from '../../core/crypto/key-ring';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../lib/embedded-postgres';
import { startTemporalDevServer, type TemporalDevServerHandle } from '../lib/temporal-dev-server';
import { freePort } from '../../test/helpers/ports';
import { buildFixture } from '../../bench/fixtures';
import { startReceiver, type Receiver } from '../../bench/receiver';
import {
  balanceDifferences,
  dumpWithSnapshot,
  findPostgresTools,
  readBalances,
  readTrialBalance,
  restoreDump,
  type PostgresTools,
  type SourceAtBackup,
} from './postgres-backup';
import { serviceEnv, startService, type Service } from './service';
import { createIssuer, type Issuer } from './traffic';
import { finalState, waitUntilSettled, type Check } from './checks';

const ROOT = resolve(__dirname, '..', '..');
/** Purchases before and after the backup, at this rate: enough to have some in every state. */
const PURCHASES = Number(process.env.RESTORE_DRILL_PURCHASES ?? 240);
const RATE = Number(process.env.RESTORE_DRILL_RATE ?? 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => console.error(`[restore-drill] ${line}`);

interface Drill {
  tools: PostgresTools;
  dir: string;
  operatorToken: string;
  webhookSecretKeys: string;
  receiver: Receiver;
  /** The webhook ids the receiver got for each settlement. */
  webhooksByTransaction: Map<string, Set<string>>;
  stops: Array<() => Promise<unknown>>;
}

async function startPostgres(drill: Drill, name: string): Promise<{ pg: EmbeddedPostgresHandle; url: string }> {
  const server = await startEmbeddedPostgres({
    dataDir: join(drill.dir, name),
    port: await freePort(),
    persistent: false,
    binDir: drill.tools.binDir,
  });
  drill.stops.unshift(() => server.stop());
  await server.createDatabase('rewards');
  return { pg: server, url: server.databaseUrl('rewards') };
}

async function startTemporal(drill: Drill): Promise<TemporalDevServerHandle> {
  const temporal = await startTemporalDevServer({ port: await freePort() });
  drill.stops.unshift(() => temporal.stop());
  return temporal;
}

async function service(drill: Drill, databaseUrl: string, temporalAddress: string, name: string): Promise<Service> {
  const started = await startService({
    databaseUrl,
    temporalAddress,
    operatorToken: drill.operatorToken,
    webhookSecretKeys: drill.webhookSecretKeys,
    port: await freePort(),
    logFile: join(drill.dir, `${name}.log`),
  });
  drill.stops.unshift(() => started.stop());
  return started;
}

/** Steps 1 and 2: the source under traffic, and its backup. */
async function backUpUnderTraffic(
  drill: Drill,
): Promise<{ issuer: Issuer; source: SourceAtBackup; startedAt: number }> {
  const { url } = await startPostgres(drill, 'source');
  await migrate(url);
  const temporal = await startTemporal(drill);
  const api = await service(drill, url, temporal.address, 'source');
  const fixture = await buildFixture({
    apiUrl: api.apiUrl,
    operatorToken: drill.operatorToken,
    groups: 10,
    webhookUrl: drill.receiver.url,
  });
  const issuer = createIssuer(fixture);
  // A first half processed before the backup (a ledger with balances, previews left open), then
  // the second half, with the backup in its middle.
  log(`sending ${PURCHASES} purchases at ${RATE}/s; the backup a third into the second half`);
  await issuer.sendPurchases(api.apiUrl, PURCHASES / 2, RATE, 'drill-a');
  await waitForNothingPending(url);
  const traffic = issuer.sendPurchases(api.apiUrl, PURCHASES / 2, RATE, 'drill-b');
  await sleep((PURCHASES / 2 / RATE / 3) * 1000);
  api.worker.kill('SIGSTOP');
  await sleep(2_000);
  const startedAt = Date.now();
  const dump = join(drill.dir, 'rewards.dump');
  const source = await dumpWithSnapshot(drill.tools, url, dump, () => api.worker.kill('SIGCONT'));
  log(
    `backup taken: ${source.balances.size} accounts, ${source.pending.length} events pending ` +
      `(${source.queued} queued for hand-over), ${source.openPreviews.length} previews open, ${source.dumpBytes} bytes`,
  );
  await traffic;
  for (const stop of drill.stops.splice(0)) await stop();
  return { issuer, source, startedAt };
}

/** Until the worker has processed every stored event (bounded: the first workflow tasks wait for the bundle). */
async function waitForNothingPending(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let waited = 0; waited < 120_000; waited += 500) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ingested_event WHERE reward_status = 'pending'`,
      );
      if (rows[0].n === 0) return;
      await sleep(500);
    }
    throw new Error('the source did not process its first purchases within 120 s');
  } finally {
    await client.end();
  }
}

/** Step 3: the restored database, compared with the source at the backup's point. */
async function restoreAndCompare(drill: Drill, source: SourceAtBackup): Promise<{ url: string; checks: Check[] }> {
  const { url } = await startPostgres(drill, 'restored');
  await restoreDump(drill.tools, join(drill.dir, 'rewards.dump'), url);
  const migrated = await migrate(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const db = createDb(url, 2);
  try {
    const differences = balanceDifferences(source.balances, await readBalances(client));
    const trialBalance = await readTrialBalance(client);
    const violations = await ledgerInvariants(db);
    return {
      url,
      checks: [
        {
          what: 'migrations to apply on the restored database',
          result: String(migrated.applied.length),
          ok: migrated.applied.length === 0,
        },
        {
          what: 'account balances equal to the source at the backup',
          result: `${source.balances.size - differences.length} of ${source.balances.size}${differences.length ? `; ${differences.slice(0, 3).join('; ')}` : ''}`,
          ok: differences.length === 0 && source.balances.size > 0,
        },
        {
          what: 'trial balance, restored (source at the backup)',
          result: `${trialBalance} (${source.trialBalanceMinor})`,
          ok: trialBalance === '0' && source.trialBalanceMinor === '0',
        },
        {
          what: 'ledger invariants, restored',
          result: violations.length === 0 ? 'hold' : JSON.stringify(violations.slice(0, 3)),
          ok: violations.length === 0,
        },
      ],
    };
  } finally {
    await client.end();
    await db.$disconnect();
  }
}

/** `npm run admin -- recover:in-flight`, as an operator runs it, against the restored service. */
async function recoverInFlight(databaseUrl: string, temporalAddress: string, drill: Drill): Promise<Check> {
  const env = serviceEnv({
    databaseUrl,
    temporalAddress,
    operatorToken: drill.operatorToken,
    webhookSecretKeys: drill.webhookSecretKeys,
    port: 0,
  });
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'scripts', 'admin.ts'), 'recover:in-flight'],
    {
      cwd: ROOT,
      env,
    },
  );
  const printed = JSON.parse(stdout) as { handedOver: number; failed: number; deliveriesResumed: number };
  return {
    what: 'recover:in-flight',
    result: `${printed.handedOver} handed over, ${printed.failed} refused, ${printed.deliveriesResumed} deliveries resumed`,
    ok: printed.failed === 0,
  };
}

/** Steps 4 and 5. */
async function runRestored(drill: Drill, url: string, issuer: Issuer, source: SourceAtBackup, backupStartedAt: number) {
  const temporal = await startTemporal(drill);
  const api = await service(drill, url, temporal.address, 'restored');
  const recovery = await recoverInFlight(url, temporal.address, drill);
  const since = issuer.sent.filter((e) => e.acknowledgedAt >= backupStartedAt);
  const openSettlements = issuer.open.length;
  log(
    `restored service up; sending again ${since.length} events acknowledged since the backup began, and ${openSettlements} open settlements`,
  );
  await issuer.resend(api.apiUrl, since);
  const waited = await waitUntilSettled(url, issuer, 180_000);
  const checks = await finalState(url, issuer, source, drill.webhooksByTransaction);
  return [
    recovery,
    {
      what: 'events sent again after the restore (open settlements)',
      result: `${since.length} (${openSettlements})`,
      ok: true,
    },
    {
      what: 'drained after the restore',
      result: waited >= 0 ? `${(waited / 1000).toFixed(1)} s` : 'not within 180 s',
      ok: waited >= 0,
    },
    ...checks,
  ];
}

function table(checks: Check[]): string {
  const rows = checks.map((c) => `| ${c.what} | ${c.result} | ${c.ok ? 'ok' : 'FAILED'} |`);
  return ['| check | result | |', '|---|---|---|', ...rows].join('\n');
}

async function main(): Promise<number> {
  const started = Date.now();
  const tools = findPostgresTools();
  const dir = mkdtempSync(join(tmpdir(), 'rewards-restore-drill-'));
  const drill: Drill = {
    tools,
    dir,
    operatorToken: `op_drill_${randomBytes(24).toString('hex')}`,
    webhookSecretKeys: generateKeyRingEntry('drill'),
    receiver: await startReceiver(),
    webhooksByTransaction: new Map(),
    stops: [],
  };
  drill.receiver.onWebhook = ({ transactionId, webhookId }) => {
    const ids = drill.webhooksByTransaction.get(transactionId) ?? new Set<string>();
    drill.webhooksByTransaction.set(transactionId, ids.add(webhookId));
  };
  log(`PostgreSQL: ${tools.version} (${tools.binDir}); working folder ${dir}`);
  let failed = true;
  try {
    const { issuer, source, startedAt } = await backUpUnderTraffic(drill);
    const sentBefore = issuer.sent.filter((e) => e.acknowledgedAt < startedAt).length;
    const sentAfter = issuer.sent.length - sentBefore;
    const restored = await restoreAndCompare(drill, source);
    const after = await runRestored(drill, restored.url, issuer, source, startedAt);
    const checks = [
      {
        what: 'PostgreSQL, backup',
        result: `${tools.version.replace(/^pg_dump \(PostgreSQL\) /, '')}; pg_dump --format=custom, ${source.dumpBytes} bytes`,
        ok: true,
      },
      {
        what: 'events acknowledged before the backup began, after',
        result: `${sentBefore}, ${sentAfter}`,
        ok: true,
      },
      {
        what: 'in flight at the backup',
        result: `${source.pending.length} events pending (${source.queued} queued for hand-over), ${source.openPreviews.length} previews open`,
        ok: source.pending.length + source.openPreviews.length > 0,
      },
      ...restored.checks,
      ...after,
    ];
    console.log(table(checks));
    failed = checks.some((c) => !c.ok);
    console.log(`restore drill ${failed ? 'FAILED' : 'passed'} in ${Math.round((Date.now() - started) / 1000)} s`);
  } finally {
    for (const stop of drill.stops.splice(0)) await stop().catch((err) => log(`stop failed: ${String(err)}`));
    await drill.receiver.close();
    if (failed) log(`kept ${dir} (service logs, the dump)`);
    else rmSync(dir, { recursive: true, force: true });
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);
