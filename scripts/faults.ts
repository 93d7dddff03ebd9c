// `npm run faults` (opt-in, not part of npm test): for each scenario, a throw-away stack (the
// benchmark's: embedded PostgreSQL, the Temporal dev server, the API and the worker as separate
// processes), settled purchases sent at a steady rate by an issuer that retries until it gets a
// 204, and one fault injected while they arrive. Then it waits until every acknowledged event has
// its outcome and prints one line per scenario: events acknowledged, lost, double-posted,
// webhooks distinct vs expected, duplicate deliveries, the trial balance, the drain time and
// whether a process died by itself. The table goes to docs/operating/faults.md.
//
//   npm run faults                       every scenario
//   npm run faults -- worker-kill        one of them
//   FAULTS_EVENTS=600 npm run faults     more events (default 300, at FAULTS_RATE=25 a second)
import pg from 'pg';
import { startBenchStack, type BenchStack } from '../bench/stack';
import { buildFixture, purchase, type Fixture } from '../bench/fixtures';
import { startReceiver, type Receiver } from '../bench/receiver';

const EVENTS = Number(process.env.FAULTS_EVENTS ?? 300);
const RATE = Number(process.env.FAULTS_RATE ?? 25);
/** The fault comes this long after the first event. */
const FAULT_AT_MS = 4_000;
/** A killed process is started again this long after (what npm start or an orchestrator does). */
const RESTART_AFTER_MS = 1_000;
const DRAIN_TIMEOUT_MS = 180_000;
/** An issuer retries a refused or failed POST this often, this far apart. */
const SEND_ATTEMPTS = 30;
const SEND_RETRY_MS = 1_000;

interface Outcome {
  scenario: string;
  acknowledged: number;
  lost: number;
  doublePosted: number;
  webhooksDistinct: number;
  webhooksExpected: number;
  duplicates: number;
  trialBalanceMinor: number;
  drainMs: number;
  diedByItself: number;
}

type Fault = (stack: BenchStack) => Promise<void>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const WORKER_ENV = { WORKER_METRICS_PORT: '0', TEMPORAL_METRICS_PORT: '0' };

const SCENARIOS: Record<string, Fault> = {
  async 'api-kill'(stack) {
    stack.api.kill('SIGKILL');
    await sleep(RESTART_AFTER_MS);
    stack.api = stack.spawnNode('api/server.ts');
  },
  async 'worker-kill'(stack) {
    stack.worker.kill('SIGKILL');
    await sleep(RESTART_AFTER_MS);
    stack.worker = stack.spawnNode('worker/main.ts', WORKER_ENV);
  },
  // Every connection of the service's database ended, three times a second apart, as a
  // PostgreSQL restart or failover ends them: transactions, exports, LISTEN and idle ones.
  async 'db-connections'(stack) {
    for (let round = 0; round < 3; round++) {
      await terminateConnections(stack.databaseUrl);
      await sleep(1_000);
    }
  },
};

async function terminateConnections(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
  } finally {
    await client.end();
  }
}

/** POSTs one event until it is acknowledged (204), as an issuer's retrying client does. */
async function sendUntilAcknowledged(apiUrl: string, token: string, event: unknown): Promise<boolean> {
  for (let attempt = 0; attempt < SEND_ATTEMPTS; attempt++) {
    const status = await fetch(`${apiUrl}/api/v1/incoming-txn`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(event),
    }).then(
      (r) => r.arrayBuffer().then(() => r.status),
      () => 0,
    );
    if (status === 204) return true;
    await sleep(SEND_RETRY_MS);
  }
  return false;
}

async function sendLoad(stack: BenchStack, fixture: Fixture, runId: string, fault: Fault): Promise<string[]> {
  const acknowledged: string[] = [];
  const sends: Array<Promise<void>> = [];
  const start = performance.now();
  const injected = sleep(FAULT_AT_MS).then(() => fault(stack));
  for (let n = 0; n < EVENTS; n++) {
    const wait = start + (n * 1000) / RATE - performance.now();
    if (wait > 0) await sleep(wait);
    const externalId = `fault-${runId}-${n}`;
    sends.push(
      sendUntilAcknowledged(stack.apiUrl, fixture.token, purchase(fixture, externalId, n)).then((ok) => {
        if (ok) acknowledged.push(externalId);
      }),
    );
  }
  await Promise.all([...sends, injected]);
  return acknowledged;
}

interface Ledger {
  stored: number;
  pending: number;
  webhooksExpected: number;
  doublePosted: number;
  trialBalanceMinor: number;
}

async function readLedger(db: pg.Client, issuerId: string, acknowledged: string[]): Promise<Ledger> {
  const one = async (sql: string, values: unknown[]) => Number((await db.query(sql, values)).rows[0].n);
  return {
    stored: await one(
      `SELECT count(*) AS n FROM ingested_event WHERE issuer_id = $1 AND kind = 'settled' AND external_id = ANY($2)`,
      [issuerId, acknowledged],
    ),
    pending: await one(`SELECT count(*) AS n FROM ingested_event WHERE issuer_id = $1 AND reward_status = 'pending'`, [
      issuerId,
    ]),
    webhooksExpected: await one(
      `SELECT count(*) AS n FROM webhook WHERE issuer_id = $1 AND type = 'qualified_settlement'`,
      [issuerId],
    ),
    doublePosted: await one(
      `SELECT count(*) AS n FROM (SELECT 1 FROM reward_event WHERE issuer_id = $1 AND transaction_id IS NOT NULL
        GROUP BY transaction_id, type HAVING count(*) > 1) d`,
      [issuerId],
    ),
    trialBalanceMinor: await one(`SELECT COALESCE(SUM(amount_minor), 0) AS n FROM ledger_entry`, []),
  };
}

async function runScenario(name: string, fault: Fault): Promise<Outcome> {
  const log = (line: string) => console.error(`[${name}] ${line}`);
  const stack = await startBenchStack(log);
  const receiver: Receiver = await startReceiver();
  const deliveries = new Map<string, number>();
  receiver.onWebhook = (a) => deliveries.set(a.transactionId, (deliveries.get(a.transactionId) ?? 0) + 1);
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  db.on('error', () => undefined);
  try {
    const fixture = await buildFixture({
      apiUrl: stack.apiUrl,
      operatorToken: stack.operatorToken,
      groups: 10,
      webhookUrl: receiver.url,
    });
    log(`sending ${EVENTS} purchases at ${RATE}/s; the fault at ${FAULT_AT_MS} ms`);
    const acknowledged = await sendLoad(stack, fixture, String(Date.now()), fault);
    const sentAt = performance.now();
    await db.connect();
    let ledger = await readLedger(db, fixture.issuerId, acknowledged);
    while (performance.now() - sentAt < DRAIN_TIMEOUT_MS) {
      ledger = await readLedger(db, fixture.issuerId, acknowledged);
      if (ledger.pending === 0 && deliveries.size >= ledger.webhooksExpected) break;
      await sleep(500);
    }
    const drainMs = Math.round(performance.now() - sentAt);
    const duplicates = [...deliveries.values()].reduce((sum, n) => sum + n - 1, 0);
    const diedByItself = [stack.api, stack.worker].filter((c) => c.exitCode !== null || c.signalCode !== null).length;
    return {
      scenario: name,
      acknowledged: acknowledged.length,
      lost: acknowledged.length - ledger.stored + ledger.pending,
      doublePosted: ledger.doublePosted,
      webhooksDistinct: deliveries.size,
      webhooksExpected: ledger.webhooksExpected,
      duplicates,
      trialBalanceMinor: ledger.trialBalanceMinor,
      drainMs,
      diedByItself,
    };
  } finally {
    await db.end().catch(() => undefined);
    await receiver.close();
    await stack.stop();
  }
}

/**
 * A scenario whose stack could not start (a free port taken meanwhile by another process on a
 * shared machine) runs once more on a fresh stack rather than ending the whole run.
 */
async function runTwice(name: string): Promise<Outcome> {
  try {
    return await runScenario(name, SCENARIOS[name]);
  } catch (err) {
    console.error(`[${name}] failed, running it once more on a fresh stack: ${String(err)}`);
    return runScenario(name, SCENARIOS[name]);
  }
}

function table(outcomes: Outcome[]): string {
  const head =
    '| scenario | acknowledged | lost | double-posted | webhooks distinct / expected | duplicates | trial balance | drain | processes died by themselves |';
  const rule = '|---|---|---|---|---|---|---|---|---|';
  const rows = outcomes.map(
    (o) =>
      `| ${o.scenario} | ${o.acknowledged} | ${o.lost} | ${o.doublePosted} | ${o.webhooksDistinct} / ${o.webhooksExpected} | ${o.duplicates} | ${o.trialBalanceMinor} | ${(o.drainMs / 1000).toFixed(1)} s | ${o.diedByItself} |`,
  );
  return [head, rule, ...rows].join('\n');
}

async function main(): Promise<void> {
  const chosen = process.argv.slice(2);
  const names = chosen.length > 0 ? chosen : Object.keys(SCENARIOS);
  const unknown = names.filter((n) => !(n in SCENARIOS));
  if (unknown.length > 0) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS)}`);
  const outcomes: Outcome[] = [];
  for (const name of names) outcomes.push(await runTwice(name));
  console.log(table(outcomes));
  const bad = outcomes.filter((o) => o.lost > 0 || o.doublePosted > 0 || o.trialBalanceMinor !== 0);
  process.exitCode = bad.length > 0 ? 1 : 0;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});
