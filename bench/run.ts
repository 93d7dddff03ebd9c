// `npm run bench`: DESIGN.md "Quality bars", measured on a throw-away stack, its API and worker
// at the service's default log level (info) unless BENCH_LOG_LEVEL says otherwise.
//   1. fixtures through the APIs         10. reads: the bare floor server, reward-detail, summary
//   2. floor: the empty workflow         11. notices: the reward notices scan over 10,000 due grants
//   3. end to end at 10/s                12. payouts: a run over 100,000 groups beside pgbench on the
//   4. sustained: the real lifecycle,         same PostgreSQL, then one with the worker killed twice
//      drain check and trial balance    13. statements: a month of 1,000,000 seeded transfers billed
//   5. tracing: the lifecycle untraced        by the real run
//      and exporting traces over OTLP,  14. fairness: healthy webhook endpoints beside one that
//      in alternated rounds on restarted      never answers, at 100 webhooks/s, for 5 minutes
//      processes                        15. overload: purchases offered at twice the sustained
//   6. cost: billable actions per             rate for 3 minutes, then the drain
//      purchase, from histories         16. issuer fairness: a small issuer's latency while a big
//   7. budgets: the lifecycle at one          one dumps 50,000 events (the rest of the dump cleared)
//      budgeted offer beside its        17. ingestion: the floor server, the API with the worker
//      unbudgeted twin, a race for a          paused, then running (last: its backlog is thrown away)
//      budget that covers half of it, and
//      where the budget row is locked
//   8. end to end at half the sustained rate
//   9. history: a short and a long group, for the summary
// and, after 13, the audit trail: audited operator calls, what the trail adds to one, and a
// chain of 1,000,000 rows verified (bench/audit.ts); between 16 and 17, targeting: the lifecycle at a targeted offer beside its untargeted twin,
// a group's offer list over 500 targeted offers, an enrolment run over 1,000,000 groups and the
// lift report over them (bench/targeting.ts).
// The floor runs first, on an empty server: the lifecycle then runs beside the floor's
// finished workflows, which can only make the lifecycle's share of the floor look smaller.
// Tracing follows the sustained phase: alternated rounds, untraced then traced, each on restarted
// processes (bench/tracing.ts).
// Ingestion runs last because 8 clients leave tens of thousands of purchases for the worker,
// far more than a run can drain; earlier phases would measure that backlog instead. Fairness
// runs just before it for the same reason (the relay would share the worker with that
// backlog, and its latencies and memory would measure the backlog), and after the reads and
// the notices, whose figures its minutes of writes and their vacuum would otherwise disturb.
// Payouts and statements run after the phases that measure purchases (their 100,000 groups and
// million seeded transfers grow the tables those read) and before the ones that leave work behind
// (the ingestion's backlog would share the worker their activities need).
// Overload and issuer fairness run after fairness, and before the ingestion: each leaves the worker a
// backlog (the overload drains its own; the issuer fairness phase clears what its dump left).
// Targeting runs after them, and before the ingestion, for the same reason: its million groups,
// their enrolments and the report's purchases would grow the tables every earlier phase reads.
// `npm run bench -- --only fairness` runs that phase alone on a fresh stack, `--only tracing`,
// `--only payouts` and `--only statements` too (BENCH_STATEMENT_TRANSFERS smaller for a quick look),
// `--only audit`, `--only ingestion`, `--only issuer-fairness`, `--only budgets` and `--only targeting` after the
// fixtures (BENCH_TARGETING_GROUPS smaller for a quick look),
// `--only overload` after the fixtures and the sustained phase (whose rate it doubles), and
// `--only reads` after the fixtures, the sustained and the history phases (whose purchases it
// reads; BENCH_BACKLOG and BENCH_HISTORY_PURCHASES smaller for a quicker run).
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { loadBenchConfig, type BenchConfig } from './config';
import { childReady, startBenchStack, type BenchStack } from './stack';
import { freePort } from '../test/helpers/ports';
import { startReceiver, type Receiver } from './receiver';
import { buildFixture, caller, type Fixture } from './fixtures';
import { runEndToEnd, type EndToEndResult } from './end-to-end';
import { describeStages } from './e2e-stages';
import { pendingAfterDrain, runFloorDrain, runLifecycleDrain, type DrainResult } from './sustained';
import { measureCost, type CostResult, type PurchaseCost } from './cost';
import { buildHistories, type HistoryGroup } from './history';
import { runReads } from './reads';
import { runIngestion, type IngestionResult } from './ingestion';
import { ingestionRows as ingestionFigureRows } from './ingestion-figures';
import { measureNoticeScan, type NoticeResult } from './notices';
import { measureFairness, type FairnessResult } from './fairness';
import { CPU_GROUPS, type CpuGroup } from './cpu';
import { measureTracing, tracingShares, type TracingResult } from './tracing';
import { runOverload, type OverloadCpu, type OverloadResult } from './overload';
import { runIssuerFairness, STRAGGLERS_MS, type IssuerFairnessResult } from './issuer-fairness';
import { loadConfig } from '../core/config';
import { budgetShare, measureBudgets, type BudgetResult } from './budgets';
import { measureStatements, type StatementResult } from './statements';
import { measureAudit, type AuditResult } from './audit';
import { describeMachine } from './machine';
import { measurePayouts, type PayoutResult } from './payouts';
import { measureTargeting, type TargetingResult } from './targeting';
import { targetingRows } from './targeting-figures';
import { met, printReport, writeResults, type Row } from './report';
import { appendHistory, currentCommit, historyLine, parseBenchArgs } from './record';
import { afterTemporalDeath, temporalDeathTracker, type PhaseDeath } from './temporal-death';

const PROCESSES =
  'API (api/server.ts) and worker (worker/main.ts with its webhook relay, metrics ports off) as separate Node processes, ' +
  'floor worker and bare floor server (bench/floor-server.ts) as further processes during their phases; load generator, webhook receiver, the never-answering endpoint, floor hand-over and the OTLP sink of the tracing phase in the bench process; ' +
  'PostgreSQL (embedded) and Temporal dev server (on a SQLite file with WAL, as npm start, unless BENCH_TEMPORAL_STORE=memory) as their own processes; all on this machine';

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
const load1m = () => Math.round(os.loadavg()[0] * 100) / 100;

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const config = loadBenchConfig();
  const machine = describeMachine();
  // Taken before the run: the figures belong to the code as it was when they were measured.
  const commit = currentCommit();
  const startedAt = new Date();
  const runId = randomBytes(4).toString('hex');
  let stack: BenchStack | undefined;
  const receiver = await startReceiver();
  const watchdog = setTimeout(() => {
    console.error(`bench: still running after ${config.maxSeconds} s; stopping`);
    void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(2));
  }, config.maxSeconds * 1000);
  const interrupt = () => void (stack?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    stack = await startBenchStack(log, { temporalStore: config.temporalStore });
    const temporal = temporalDeathTracker();
    const run: PhaseContext = {
      stack,
      receiver,
      config,
      runId,
      phases: {},
      loads: {},
      phaseSeconds: {},
      temporal,
      deaths: {},
    };
    const measured = await phasesAsked(run, args.only);
    // A phase run alone is one phase: its rows are marked as a whole run's phase would be.
    const rows = args.only ? afterTemporalDeath(measured, temporal.seen(args.only, stack.temporalDied())) : measured;
    if (temporal.death) run.phases.temporalDied = temporal.death;
    const services = `API and worker at LOG_LEVEL=${stack.logLevel} (${process.env.BENCH_LOG_LEVEL ? 'BENCH_LOG_LEVEL' : "the service's default"}); traces exported only in the tracing phase${config.tracingCalibration ? '; a CALIBRATION run (BENCH_TRACING_CALIBRATION=1): the traced side runs with tracing off' : ''}`;
    const table = printReport(machine, PROCESSES, services, rows);
    const file = writeResults(resolve(__dirname, 'results'), {
      at: new Date().toISOString(),
      runId,
      machine,
      processes: PROCESSES,
      logLevel: stack.logLevel,
      config,
      loadAverageAtPhaseStart: run.loads,
      rows: rows.map((r) => ({ ...r, met: met(r) })),
      phases: run.phases,
      table,
    });
    log(`results written to ${file}`);
    if (args.record) {
      const line = historyLine({
        time: startedAt,
        commit,
        machine,
        load: run.loads,
        logLevel: stack.logLevel,
        config,
        calibration: config.tracingCalibration,
        seconds: (Date.now() - startedAt.getTime()) / 1000,
        phaseSeconds: run.phaseSeconds,
        temporalDied: temporal.death,
        rows,
      });
      log(`run recorded in ${appendHistory(line)}`);
    }
  } finally {
    clearTimeout(watchdog);
    await receiver.close();
    await stack?.stop();
  }
}

/** The phase `--only` names, alone (with what it needs before it), or every phase. */
async function phasesAsked(run: PhaseContext, only: string | undefined): Promise<Row[]> {
  switch (only) {
    case 'fairness':
      return fairnessRows(await fairnessPhase(run));
    case 'tracing':
      return tracingRows(await tracingPhase(run));
    case 'ingestion':
      return ingestionAlone(run);
    case 'reads':
      return readsAlone(run);
    case 'overload':
      return overloadAlone(run);
    case 'issuer-fairness':
      return issuerFairnessRows(await issuerFairnessPhase(await withFixture(run)));
    case 'payouts':
      return payoutRows(await payoutPhase(run));
    case 'budgets':
      return budgetRows(await budgetPhase(await withFixture(run)));
    case 'targeting':
      return targetingRows(await targetingPhase(await withFixture(run)));
    case 'statements':
      return statementRows(await statementPhase(run));
    case 'audit':
      return auditRows(await auditPhase(run));
    default:
      return everyPhase(run);
  }
}

/** One bench run: what every phase uses, and what each leaves for the results file. */
interface PhaseContext {
  stack: BenchStack;
  receiver: Receiver;
  config: BenchConfig;
  runId: string;
  /** Each phase's figures, by phase. */
  phases: Record<string, unknown>;
  /** The 1-minute load average as each phase began. */
  loads: Record<string, number>;
  /** How long each phase took, in seconds (a whole run's phases; the history keeps them). */
  phaseSeconds: Record<string, number>;
  /** Follows the stack's Temporal dev server across the phases. */
  temporal: ReturnType<typeof temporalDeathTracker>;
  /** The phases that ran while or after the dev server died (bench/temporal-death.ts), by phase. */
  deaths: Record<string, PhaseDeath>;
}

/**
 * Runs a phase and keeps how long it took in `phaseSeconds`, and in `deaths` whether the
 * Temporal dev server died during it or before it.
 */
function phaseTimer(context: PhaseContext) {
  return async <T>(phase: string, measure: () => Promise<T>): Promise<T> => {
    const started = Date.now();
    const result = await measure();
    context.phaseSeconds[phase] = Math.round((Date.now() - started) / 1000);
    const death = context.temporal.seen(phase, context.stack.temporalDied());
    if (death) context.deaths[phase] = death;
    return result;
  };
}

/** ... and the fixtures most phases run on. */
interface Run extends PhaseContext {
  fixture: Fixture;
}

/** The fixtures, every phase, and the rows of the whole report. */
async function everyPhase(context: PhaseContext): Promise<Row[]> {
  const { stack, receiver, config } = context;
  log(`API at ${stack.apiUrl}; building fixtures (${config.groups} groups, 2 merchants)`);
  const fixture = await buildFixture({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    groups: config.groups,
    webhookUrl: receiver.url,
  });
  const run: Run = { ...context, fixture };
  return reportRows(config, await runPhases(run), run);
}

/** The fixtures and the ingestion phase: the API's intake on a stack nothing else has loaded. */
async function ingestionAlone(context: PhaseContext): Promise<Row[]> {
  const run = await withFixture(context);
  return ingestionRows(await ingestionPhase(run, await startFloorServer(context.stack)));
}

/** The fixtures, the purchases the reads read (sustained and history phases), and the reads. */
async function readsAlone(context: PhaseContext): Promise<Row[]> {
  const run = await withFixture(context);
  const { transactions } = await sustainedPhase(run);
  const histories = await historyPhase(run);
  const { floorServer, ...reads } = await readsPhase(run, transactions, histories);
  await floorServer.stop();
  return readRows({ reads, histories });
}

/** The fixtures, the sustained phase (whose rate the overload doubles) and the overload. */
async function overloadAlone(context: PhaseContext): Promise<Row[]> {
  const run = await withFixture(context);
  const { lifecycle } = await sustainedPhase(run);
  return overloadRows(await overloadPhase(run, lifecycle.steadyPerSecond));
}

async function withFixture(context: PhaseContext): Promise<Run> {
  const { stack, receiver, config } = context;
  const fixture = await buildFixture({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    groups: config.groups,
    webhookUrl: receiver.url,
  });
  return { ...context, fixture };
}

type PhaseResults = Awaited<ReturnType<typeof runPhases>>;

/** The phases in the order of the header comment, each after the one before has finished. */
async function runPhases(run: Run) {
  const timed = phaseTimer(run);
  const floor = await timed('floor', () => floorPhase(run));
  const e2e = await timed('endToEnd', () => endToEndPhase(run));
  const { lifecycle, drain, transactions } = await timed('sustained', () => sustainedPhase(run));
  const tracing = await timed('tracing', () => tracingPhase(run));
  const cost = await timed('cost', () => costPhase(run));
  const budgets = await timed('budgets', () => budgetPhase(run));
  const { halfRate, e2eHalf } = await timed('endToEndHalf', () => halfRatePhase(run, lifecycle.steadyPerSecond));
  const histories = await timed('history', () => historyPhase(run));
  const { floorServer, ...reads } = await timed('reads', () => readsPhase(run, transactions, histories));
  // After the reads, whose summary its 10,000 grants and records slowed when it came before
  // them; before the ingestion, which leaves the worker a backlog the scan would queue behind.
  const notices = await timed('notices', () => noticesPhase(run));
  // After the phases that measure purchases, whose tables their 100,000 groups and million
  // transfers would grow first; before the fairness phases and the ingestion, which leave work behind.
  const payouts = await timed('payouts', () => payoutPhase(run));
  const statements = await timed('statements', () => statementPhase(run));
  // After the statements, for the same reason: its million chained rows grow only the audit table.
  const audit = await timed('audit', () => auditPhase(run));
  const fairness = await timed('fairness', () => fairnessPhase(run));
  const overload = await timed('overload', () => overloadPhase(run, lifecycle.steadyPerSecond));
  const issuerFairness = await timed('issuerFairness', () => issuerFairnessPhase(run));
  const targeting = await timed('targeting', () => targetingPhase(run));
  const ingestion = await timed('ingestion', () => ingestionPhase(run, floorServer));
  return {
    floor,
    e2e,
    lifecycle,
    drain,
    tracing,
    cost,
    budgets,
    statements,
    audit,
    halfRate,
    e2eHalf,
    histories,
    notices,
    reads,
    payouts,
    fairness,
    overload,
    issuerFairness,
    targeting,
    ingestion,
  };
}

async function floorPhase({ stack, config, runId, phases, loads }: Run): Promise<DrainResult> {
  log(`floor: a backlog of ${config.backlog} empty workflows that complete on their signal`);
  loads.floor = load1m();
  const taskQueue = `bench-floor-${runId}`;
  const floorWorker = stack.spawnNode('bench/floor-worker.ts', { BENCH_FLOOR_TASK_QUEUE: taskQueue });
  await childReady(floorWorker);
  const floor = await runFloorDrain({
    temporalAddress: stack.temporalAddress,
    worker: floorWorker,
    taskQueue,
    backlog: config.backlog,
    timeoutMs: config.drainTimeoutSeconds * 1000,
    runId,
  });
  floorWorker.kill('SIGTERM');
  phases.floor = floor;
  log(`floor: ${floor.steadyPerSecond.toFixed(1)}/s steady`);
  return floor;
}

function endToEnd(
  { stack, fixture, receiver, config }: Run,
  rate: number,
  runId: string,
  seconds = config.e2eSeconds,
): Promise<EndToEndResult> {
  return runEndToEnd({
    apiUrl: stack.apiUrl,
    fixture,
    receiver,
    seconds,
    rate,
    runId,
    drainTimeoutMs: config.drainTimeoutSeconds * 1000,
    databaseUrl: stack.databaseUrl,
  });
}

/** The 10/s window, and the warm-up before it (the first purchases after the floor's backlog). */
type EndToEndMeasured = EndToEndResult & { warmup?: EndToEndResult };

// The first purchases of the stack run on processes that have not yet compiled the lifecycle's
// path, beside a server still settling the floor's 5,000 closed workflows: their tail is a start,
// not the steady latency the bar asks about. They are sent at the same rate, and reported apart.
async function endToEndPhase(run: Run): Promise<EndToEndMeasured> {
  const { e2eRate, e2eSeconds, e2eWarmupSeconds } = run.config;
  log(`end to end: ${e2eRate} events/s for ${e2eSeconds} s, after ${e2eWarmupSeconds} s of warm-up at that rate`);
  const warmup = e2eWarmupSeconds > 0 ? await endToEnd(run, e2eRate, `warm-${run.runId}`, e2eWarmupSeconds) : undefined;
  run.loads.endToEnd = load1m();
  const e2e: EndToEndMeasured = { ...(await endToEnd(run, e2eRate, run.runId)), warmup };
  run.phases.endToEnd = e2e;
  return e2e;
}

async function sustainedPhase({ stack, fixture, receiver, config, runId, phases, loads }: Run) {
  log(`sustained: backlog of ${config.backlog} settled events through the real lifecycle`);
  loads.sustained = load1m();
  const transactions: Array<{ chgId: string; txnId: string }> = [];
  const lifecycle = await runLifecycleDrain({
    apiUrl: stack.apiUrl,
    fixture,
    receiver,
    backlog: config.backlog,
    timeoutMs: config.drainTimeoutSeconds * 1000,
    runId,
    onTransaction: (chgId, txnId) => transactions.push({ chgId, txnId }),
  });
  const drain = await pendingAfterDrain(stack.databaseUrl, fixture.issuerId, `sus-${runId}-`, 30_000);
  phases.lifecycle = { ...lifecycle, drain };
  log(
    `lifecycle: ${lifecycle.steadyPerSecond.toFixed(1)}/s steady; accepted ${drain.accepted}, pending after drain ${drain.pending}, trial balance ${drain.trialBalanceMinor}`,
  );
  return { lifecycle, drain, transactions };
}

async function tracingPhase({ stack, receiver, config, runId, phases, loads }: PhaseContext): Promise<TracingResult> {
  const tracing = await measureTracing({
    stack,
    receiver,
    config,
    runId,
    log,
    onDrainStart: (drain, round) => {
      // The first round's, under the names earlier history lines used.
      if (round === 1) loads[drain === 'traced' ? 'tracing' : 'tracingUntraced'] = load1m();
    },
  });
  phases.tracing = tracing;
  return tracing;
}

async function budgetPhase({ stack, fixture, receiver, config, runId, phases, loads }: Run): Promise<BudgetResult> {
  log(
    `budgets: ${config.budgetRounds} rounds of ${config.budgetBacklog} purchases at a budgeted offer and at its unbudgeted twin; a race of ${config.budgetRacePurchases}; where the budget row is locked`,
  );
  loads.budgets = load1m();
  const budgets = await measureBudgets({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    databaseUrl: stack.databaseUrl,
    fixture,
    receiver,
    backlog: config.budgetBacklog,
    rounds: config.budgetRounds,
    racePurchases: config.budgetRacePurchases,
    lockSeconds: config.budgetLockSeconds,
    lockRounds: config.budgetLockRounds,
    timeoutMs: config.drainTimeoutSeconds * 1000,
    runId,
    log,
  });
  phases.budgets = budgets;
  return budgets;
}

async function targetingPhase({
  stack,
  fixture,
  receiver,
  config,
  runId,
  phases,
  loads,
}: Run): Promise<TargetingResult> {
  log(
    `targeting: ${config.targetingRounds} rounds of ${config.targetingBacklog} purchases at a targeted offer and its untargeted twin; an offer list over ${config.targetingOffers} offers; ${config.targetingGroups} groups enrolled and reported on`,
  );
  loads.targeting = load1m();
  const targeting = await measureTargeting({
    stack,
    fixture,
    receiver,
    backlog: config.targetingBacklog,
    rounds: config.targetingRounds,
    offers: config.targetingOffers,
    groups: config.targetingGroups,
    liftPurchases: config.targetingLiftPurchases,
    readSeconds: config.seconds,
    readConnections: config.readConnections,
    timeoutMs: config.drainTimeoutSeconds * 1000,
    runId,
    log,
  });
  phases.targeting = targeting;
  return targeting;
}

async function statementPhase({ stack, config, phases, loads }: PhaseContext): Promise<StatementResult> {
  log(
    `statements: a month of ${config.statementTransfers} transfers over ${config.statementIssuers} issuers x ${config.statementMerchants} merchants, billed by a statement run`,
  );
  loads.statements = load1m();
  const statements = await measureStatements({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    databaseUrl: stack.databaseUrl,
    transfers: config.statementTransfers,
    issuers: config.statementIssuers,
    merchants: config.statementMerchants,
    timeoutMs: config.drainTimeoutSeconds * 1000,
    log,
  });
  phases.statements = statements;
  log(`statements: ${statements.statements} statements in ${statements.seconds.toFixed(1)} s`);
  return statements;
}

async function auditPhase({ stack, config, phases, loads }: PhaseContext): Promise<AuditResult> {
  log(`audit: audited calls, the trail's statements, then ${config.auditRows} rows chained and verified`);
  loads.audit = load1m();
  const audit = await measureAudit({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    databaseUrl: stack.databaseUrl,
    rows: config.auditRows,
    log,
  });
  phases.audit = audit;
  return audit;
}

async function costPhase({ stack, fixture, receiver, config, runId, phases }: Run): Promise<CostResult> {
  log(
    `cost: ${config.costPurchases} settled and ${config.costPurchases} authorized-then-settled purchases, counted from their histories`,
  );
  const cost = await measureCost({
    apiUrl: stack.apiUrl,
    fixture,
    receiver,
    temporalAddress: stack.temporalAddress,
    databaseUrl: stack.databaseUrl,
    runId,
    count: config.costPurchases,
    timeoutMs: config.drainTimeoutSeconds * 1000,
  });
  phases.cost = cost;
  return cost;
}

async function halfRatePhase(run: Run, sustainedPerSecond: number) {
  const halfRate = Math.max(1, Math.floor(sustainedPerSecond / 2));
  log(`end to end: ${halfRate} events/s (half the sustained rate) for ${run.config.e2eSeconds} s`);
  run.loads.endToEndHalf = load1m();
  const e2eHalf = await endToEnd(run, halfRate, `${run.runId}-half`);
  run.phases.endToEndHalf = { rate: halfRate, ...e2eHalf };
  return { halfRate, e2eHalf };
}

async function historyPhase({ stack, fixture, config, runId, phases, loads }: Run) {
  log(`history: a group with 4 purchases and one with ${config.historyPurchases}, through the real pipeline`);
  loads.history = load1m();
  const histories = await buildHistories({
    apiUrl: stack.apiUrl,
    fixture,
    databaseUrl: stack.databaseUrl,
    runId,
    longPurchases: config.historyPurchases,
    timeoutMs: config.drainTimeoutSeconds * 1000,
  });
  phases.histories = histories;
  return histories;
}

async function noticesPhase({ stack, fixture, receiver, config, runId, phases, loads }: Run): Promise<NoticeResult> {
  log(`notices: the reward notices scan (ExpireGrants) over ${config.noticeGrants} grants with a notice due`);
  loads.notices = load1m();
  const notices = await measureNoticeScan({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    databaseUrl: stack.databaseUrl,
    temporalAddress: stack.temporalAddress,
    receiverUrl: receiver.url,
    merchantId: fixture.merchantIds[0],
    grants: config.noticeGrants,
    runId,
    timeoutMs: config.drainTimeoutSeconds * 1000,
  });
  phases.notices = notices;
  log(
    `notices: ${notices.recorded} records in ${notices.first.seconds.toFixed(1)} s; second scan wrote ${notices.second.run.result.noticesRecorded}`,
  );
  return notices;
}

async function fairnessPhase({ stack, receiver, config, phases, loads }: PhaseContext): Promise<FairnessResult> {
  log(
    `fairness: one endpoint that never answers at ${config.fairnessHangingRate} webhooks/s beside 20 healthy ones, for ${config.fairnessSeconds} s`,
  );
  loads.fairness = load1m();
  const fairness = await measureFairness({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    databaseUrl: stack.databaseUrl,
    temporalAddress: stack.temporalAddress,
    secretKeys: stack.webhookSecretKeys,
    receiver,
    workerPid: stack.worker.pid,
    seconds: config.fairnessSeconds,
    hangingRate: config.fairnessHangingRate,
    drainSeconds: config.fairnessDrainSeconds,
    log,
  });
  phases.fairness = fairness;
  const { healthy, memory } = fairness;
  log(
    `fairness: healthy p99 ${Math.round(healthy.p99Ms)} ms, ${healthy.lost} lost of ${healthy.expected}; worker RSS ${memory.startMiB.toFixed(0)} → ${memory.endMiB.toFixed(0)} MiB, ${memory.slopeMiBPerMinute.toFixed(2)} MiB/min`,
  );
  return fairness;
}

/** The overload's result, with the sustained rate it was measured against. */
type OverloadMeasured = OverloadResult & {
  /** The lifecycle's sustained rate on this stack just before the overload: the bar's reference. */
  referencePerSecond: number;
  /** The sustained phase's, measured on a fresh database at the start of the run. */
  sustainedPerSecond: number;
};

// The overload is held against the sustained rate of the same stack just before it, not the
// sustained phase's: by then the run has added payouts for 100,000 groups, a million transfers
// and five minutes of webhooks, and the machine may be busier or quieter than an hour earlier.
// Comparing across that drift measured the drift (docs/decisions/0037-admission-at-the-hand-over.md).
async function overloadPhase(run: Run, sustainedPerSecond: number): Promise<OverloadMeasured> {
  const { stack, fixture, receiver, config, runId, phases, loads } = run;
  log(`overload: first the sustained rate on this stack now, a backlog of ${config.overloadReferenceBacklog}`);
  loads.overloadReference = load1m();
  const reference = await runLifecycleDrain({
    apiUrl: stack.apiUrl,
    fixture,
    receiver,
    backlog: config.overloadReferenceBacklog,
    timeoutMs: config.drainTimeoutSeconds * 1000,
    runId: `ovref-${runId}`,
    onTransaction: () => undefined,
  });
  const referencePerSecond = reference.steadyPerSecond;
  const rate = Math.max(1, Math.round((referencePerSecond * config.overloadPercent) / 100));
  log(
    `overload: ${rate} events/s (${config.overloadPercent} % of the sustained ${referencePerSecond.toFixed(1)}/s; the sustained phase's ${sustainedPerSecond.toFixed(1)}/s) for ${config.overloadSeconds} s, then the drain`,
  );
  loads.overload = load1m();
  const overload = await runOverload({
    apiUrl: stack.apiUrl,
    databaseUrl: stack.databaseUrl,
    temporalAddress: stack.temporalAddress,
    fixture,
    receiver,
    ratePerSecond: rate,
    seconds: config.overloadSeconds,
    drainTimeoutMs: config.drainTimeoutSeconds * 1000,
    runId,
    roots: { api: stack.api.pid!, worker: stack.worker.pid!, bench: process.pid },
    log,
  });
  const measured = { ...overload, referencePerSecond, sustainedPerSecond };
  phases.overload = { ...measured, reference, handoverMaxInFlight: handoverBound() ?? null };
  log(
    `overload: ${overload.duringPerSecond.toFixed(1)}/s during, drain ${overload.drainPerSecond.toFixed(1)}/s; at most ${overload.inFlightMax} in flight, ${overload.runningMax} workflows running`,
  );
  return measured;
}

async function issuerFairnessPhase({ stack, fixture, receiver, config, runId, phases, loads }: Run) {
  log(
    `issuer fairness: one issuer dumps ${config.dumpEvents} events while another sends ${config.smallIssuerRate}/s, for ${config.issuerFairnessSeconds} s`,
  );
  loads.issuerFairness = load1m();
  const result = await runIssuerFairness({
    stack,
    big: fixture,
    receiver,
    dumpEvents: config.dumpEvents,
    smallRatePerSecond: config.smallIssuerRate,
    seconds: config.issuerFairnessSeconds,
    runId,
    log,
  });
  phases.issuerFairness = result;
  log(
    `issuer fairness: small issuer p99 ${Math.round(result.small.p99Ms)} ms, ${result.small.lost} lost; cleared ${result.cleared.queued} queued, ${result.cleared.terminated} runs`,
  );
  return result;
}

/**
 * HANDOVER_MAX_IN_FLIGHT of the services (the bench's environment reaches them), as their own
 * configuration reads it; undefined for code without admission at the hand-over (a "before" run).
 */
function handoverBound(): number | undefined {
  return (loadConfig(process.env) as { handoverMaxInFlight?: number }).handoverMaxInFlight;
}

/** Returns the bare floor server it started, still running: the ingestion phase uses it too. */
async function readsPhase(
  { stack, fixture, config, phases, loads }: Run,
  transactions: Array<{ chgId: string; txnId: string }>,
  histories: { short: HistoryGroup; long: HistoryGroup },
) {
  log(
    `reads: the bare floor server, reward-detail, summary; ${config.readConnections} connections, ${config.seconds} s each`,
  );
  loads.reads = load1m();
  const floorServer = await startFloorServer(stack);
  const read = (base: string, paths: string[]) =>
    runReads({
      apiUrl: base,
      token: fixture.token,
      paths,
      seconds: config.seconds,
      connections: config.readConnections,
    });
  const picked = transactions.slice(0, 2000);
  const readFloor = await read(
    floorServer.url,
    picked.map((t) => `/floor/read/${t.txnId}`),
  );
  const detail = await read(
    stack.apiUrl,
    picked.map((t) => `/api/v2/chg/${t.chgId}/transaction/${t.txnId}/reward-detail`),
  );
  const summary = await read(
    stack.apiUrl,
    fixture.groups.map((g) => `/api/v2/chg/${g.chgId}/rewards/summary`),
  );
  const summaryShort = await read(stack.apiUrl, [`/api/v2/chg/${histories.short.chgId}/rewards/summary`]);
  const summaryLong = await read(stack.apiUrl, [`/api/v2/chg/${histories.long.chgId}/rewards/summary`]);
  Object.assign(phases, { readFloor, rewardDetail: detail, summary, summaryShort, summaryLong });
  return { floorServer, readFloor, detail, summary, summaryShort, summaryLong };
}

/** Stops the bare floor server once it has been measured. */
async function ingestionPhase({ stack, fixture, config, runId, phases, loads }: Run, floorServer: FloorServer) {
  log(
    `ingestion: the bare floor server, then the API; ${config.ingestClients} clients, batches of ${config.batchSize}, ${config.seconds} s each`,
  );
  loads.ingestion = load1m();
  const ingest = (base: string, path: string | undefined, tag: string) =>
    runIngestion({
      apiUrl: base,
      path,
      fixture,
      seconds: config.seconds,
      clients: config.ingestClients,
      batchSize: config.batchSize,
      runId: `${runId}-${tag}`,
    });
  const ingestionFloor = await ingest(floorServer.url, '/floor/ingest', 'floor');
  await floorServer.stop();
  // The phase measures the intake, not the backlog limit: at full speed one issuer queues
  // INGESTION_BACKLOG_LIMIT's default in about 15 s, after which every batch would be refused
  // (429 backlog_full) for the rest of the phase. The operator raises the bench issuer's limit,
  // as for an issuer announcing a large file, and puts it back after.
  const operator = caller(stack.apiUrl, stack.operatorToken);
  const setBacklogLimit = (ingestionBacklogLimit: number | null) =>
    operator('PATCH', `/admin/v1/issuers/${fixture.issuerId}`, { ingestionBacklogLimit });
  await setBacklogLimit(INGESTION_PHASE_BACKLOG_LIMIT);
  let ingestion: IngestionResult;
  let handedOver: number;
  let ingestionBusy: IngestionResult;
  let handedOverBusy: number;
  try {
    // The quality bar's condition: the API beside an idle worker (paused: the API still hands
    // events over to Temporal, up to the admission bound), so the API and the floor have the same
    // machine. Then again with the worker turning the events into lifecycles meanwhile, as when a
    // settlement file arrives during the day: an informative figure, the pipeline's share of 2 cores.
    stack.worker.kill('SIGSTOP');
    try {
      ingestion = await ingest(stack.apiUrl, undefined, 'api');
    } finally {
      stack.worker.kill('SIGCONT');
    }
    handedOver = await countHandedOver(stack.databaseUrl, fixture.issuerId, `ing-${runId}-api-`);
    log(`ingestion with the worker running: ${config.seconds} s more`);
    ingestionBusy = await ingest(stack.apiUrl, undefined, 'busy');
    // Behind the idle measurement's backlog, oldest first: what the worker took meanwhile is the
    // growth of everything the phase handed over, not the share of the new events.
    handedOverBusy = (await countHandedOver(stack.databaseUrl, fixture.issuerId, `ing-${runId}-`)) - handedOver;
  } finally {
    await setBacklogLimit(null);
  }
  Object.assign(phases, {
    ingestionFloor,
    ingestion: { ...ingestion, handedOverDuringPhase: handedOver },
    ingestionWithWorkerRunning: { ...ingestionBusy, handedOverDuringPhase: handedOverBusy },
  });
  return { ingestionFloor, ingestion, handedOver, ingestionBusy, handedOverBusy };
}

/** The bench issuer's backlog limit during the ingestion phase: the largest an operator may set. */
const INGESTION_PHASE_BACKLOG_LIMIT = 100_000_000;

/**
 * The report's rows, in the order of its table; each group under the latest phase it was measured
 * in (as phaseTimer names them), whose rows carry no target if the dev server died during or before it.
 */
function reportRows(config: BenchConfig, results: PhaseResults, { loads, deaths }: PhaseContext): Row[] {
  const of = (phase: string, rows: Row[]) => afterTemporalDeath(rows, deaths[phase]);
  const endToEnd = endToEndRows(config, results);
  return [
    ...of('ingestion', ingestionRows(results.ingestion)),
    ...of('endToEnd', endToEnd.slice(0, 2)),
    ...of('endToEndHalf', endToEnd.slice(2)),
    ...of('sustained', sustainedRows(results)),
    ...of('tracing', tracingRows(results.tracing)),
    ...of('cost', costRows(results.cost)),
    ...of('budgets', budgetRows(results.budgets)),
    ...of('statements', statementRows(results.statements)),
    ...of('audit', auditRows(results.audit)),
    ...of('notices', noticeRows(results.notices, loads)),
    ...of('payouts', payoutRows(results.payouts)),
    ...of('fairness', fairnessRows(results.fairness)),
    ...of('overload', overloadRows(results.overload)),
    ...of('issuerFairness', issuerFairnessRows(results.issuerFairness)),
    ...of('targeting', targetingRows(results.targeting)),
    ...of('reads', readRows(results)),
  ];
}

async function payoutPhase({ stack, config, phases, loads }: PhaseContext): Promise<PayoutResult> {
  log(
    `payouts: ${config.payoutGroups} groups, pgbench ${config.pgbenchSeconds} s, then a run with the worker killed twice`,
  );
  loads.payouts = load1m();
  const payouts = await measurePayouts(stack, {
    groups: config.payoutGroups,
    pgbenchSeconds: config.pgbenchSeconds,
    log,
  });
  phases.payouts = payouts;
  return payouts;
}

function payoutRows(p: PayoutResult): Row[] {
  return [
    {
      figure: 'Payouts: groups paid per second (one run)',
      value: p.groupsPerSecond,
      floor: p.pgbenchTps,
      unit: 'groups/s',
      note: `${p.groups} groups in ${p.seconds.toFixed(1)} s; floor: pgbench -b tpcb-like, 8 clients, same PostgreSQL`,
    },
    { figure: 'Payouts: floor (pgbench tpcb-like, 8 clients)', value: p.pgbenchTps, unit: 'tx/s' },
    {
      figure: 'Payouts / pgbench',
      value: (p.groupsPerSecond / p.pgbenchTps) * 100,
      unit: '%',
      target: { op: '>=', value: 100 },
    },
    {
      figure: 'Payouts: Temporal actions per 1,000 groups',
      value: p.actionsPerThousandGroups,
      unit: 'actions',
      target: { op: '<=', value: 10 },
    },
    {
      figure: 'Payouts: groups paid twice, worker killed twice',
      value: p.killed.paidTwice,
      unit: 'groups',
      target: { op: '<=', value: 0 },
      note: `${p.killed.groupsPaid} of ${p.groups} groups paid once, worker killed ${p.killed.workerKills} times, ${p.killed.seconds.toFixed(1)} s`,
    },
  ];
}

function overloadRows(o: OverloadMeasured): Row[] {
  const bound = handoverBound();
  const reference = o.referencePerSecond;
  return [
    {
      figure: 'Overload: sustained just before',
      value: reference,
      floor: o.sustainedPerSecond,
      unit: 'events/s',
      note: 'the lifecycle draining a closed backlog on the same stack right before the load, steady 10-90 %: the reference of the two ratios below; floor: the sustained phase at the start of the run',
    },
    {
      figure: 'Overload: lifecycle during overload',
      value: o.duringPerSecond,
      floor: reference,
      unit: 'events/s',
      note: `${o.offered} offered at ${o.offeredPerSecond}/s for ${o.seconds.toFixed(0)} s (${o.errors} requests refused); completed from the end of the first fifth to the end of the load; floor: the sustained rate just before`,
    },
    {
      figure: 'Overload: lifecycle during overload / sustained',
      value: (o.duringPerSecond / reference) * 100,
      unit: '%',
      target: { op: '>=', value: 90 },
      note: `against the sustained rate just before (${reference.toFixed(1)}/s); against the sustained phase at the start of the run (${o.sustainedPerSecond.toFixed(1)}/s): ${((o.duringPerSecond / o.sustainedPerSecond) * 100).toFixed(1)} %`,
    },
    {
      figure: 'Overload: backlog drain / sustained',
      value: (o.drainPerSecond / reference) * 100,
      unit: '%',
      target: { op: '>=', value: 90 },
      note: `${o.backlog} left at the end of the load, 90 % of it drained in ${o.drainSeconds.toFixed(1)} s (${o.drainPerSecond.toFixed(1)}/s); ${o.completed} completed in all; against the sustained rate just before`,
    },
    {
      figure: 'Overload: machine CPU per purchase, during / drain',
      value: (perPurchase(o.cpu.during) / perPurchase(o.cpu.drain)) * 100,
      unit: '%',
      note: `during: ${cpuNote(o.cpu.during)}; drain: ${cpuNote(o.cpu.drain)}`,
    },
    {
      figure: 'Overload: purchases in flight, max',
      value: o.inFlightMax,
      unit: 'purchases',
      ...(bound === undefined ? {} : { target: { op: '<=' as const, value: bound } }),
      note: `from each workflow's start to its step's processing, ${o.workflows} workflows; ${bound === undefined ? 'no bound in this code' : `HANDOVER_MAX_IN_FLIGHT ${bound}`}`,
    },
    {
      figure: 'Overload: lifecycle workflows running, max',
      value: o.runningMax,
      unit: 'workflows',
      ...(bound === undefined ? {} : { target: { op: '<=' as const, value: bound } }),
      note: `from each workflow's start to its close, as Temporal recorded them; ingestion to webhook p50 ${Math.round(o.latencyP50Ms)} / p99 ${Math.round(o.latencyP99Ms)} ms`,
    },
  ];
}

const perPurchase = (w: OverloadCpu) => w.machineCpuSeconds / w.completed;

/** A window's cores busy, and its CPU milliseconds per purchase by group. */
function cpuNote(w: OverloadCpu): string {
  const ms = (seconds: number) => ((seconds / w.completed) * 1000).toFixed(1);
  const groups = CPU_GROUPS.map((group) => `${group} ${ms(w.cpuSeconds[group])}`).join(', ');
  return `${(w.machineCpuSeconds / w.seconds).toFixed(2)} cores busy, ms per purchase ${ms(w.machineCpuSeconds)} (${groups})`;
}

function issuerFairnessRows(f: IssuerFairnessResult): Row[] {
  const { small } = f;
  return [
    {
      figure: 'Issuer fairness: small issuer p99',
      value: small.lost > 0 ? Infinity : small.p99Ms,
      unit: 'ms',
      target: { op: '<=', value: 5000 },
      note: `ingestion to webhook, p50 ${Math.round(small.p50Ms)} / max ${Math.round(small.maxMs)} ms; ${small.received}/${small.sent} received (${small.errors} refused) beside a dump of ${f.dumped} events accepted in ${f.dumpSeconds.toFixed(0)} s (${f.dumpErrors} batches refused), ${f.dumpCompleted} of them completed in the window`,
    },
    {
      figure: 'Issuer fairness: small issuer webhooks lost',
      value: small.lost,
      unit: 'webhooks',
      target: { op: '<=', value: 0 },
      note: f.temporalDied
        ? `not received ${STRAGGLERS_MS / 1000} s after the window: the Temporal dev server died under the dump (${f.temporalDied}); nothing cleared`
        : `not received ${STRAGGLERS_MS / 1000} s after the window; then cleared: ${f.cleared.queued} queued events of the dump, ${f.cleared.terminated} runs terminated, in ${f.cleared.seconds.toFixed(0)} s`,
    },
  ];
}

function ingestionRows(results: PhaseResults['ingestion']): Row[] {
  return ingestionFigureRows({ ...results, backlogLimit: INGESTION_PHASE_BACKLOG_LIMIT });
}

/** Per 1,000 grants. */
const perThousand = (n: number, grants: number) => (n / grants) * 1000;

function noticeRows(n: NoticeResult, loads: Record<string, number>): Row[] {
  const { first, second, statements } = n;
  return [
    {
      figure: 'Notices: events emitted by the scan',
      value: n.eventsPerSecond,
      unit: 'events/s',
      note: `${n.recorded} records for ${n.grants} due grants in ${first.seconds.toFixed(2)} s (ExpireGrants, start to result); load (1m) ${loads.notices}`,
    },
    {
      figure: 'Notices: actions per 1,000 grants',
      value: perThousand(first.cost.actions, n.grants),
      unit: 'actions',
      note: `${first.cost.actions} for the run: ${Object.entries(first.cost.byRule)
        .map(([rule, count]) => `${rule} ${count}`)
        .join(', ')}`,
    },
    {
      figure: 'Notices: SQL statements per 1,000 grants',
      value: perThousand(statements.run, n.grants),
      unit: 'statements',
      note: `${statements.run} by the run; every client meanwhile (the relay delivering too): ${Math.round(perThousand(statements.all, n.grants))} per 1,000`,
    },
    {
      figure: 'Notices: second scan, records written',
      value: second.run.result.noticesRecorded! + second.sameInstantRecorded,
      unit: 'records',
      target: { op: '<=', value: 0 },
      note: `a second run (${second.run.seconds.toFixed(1)} s, ${second.run.cost.actions} actions) and the scan at the first run's instant (${second.sameInstantGrants} grants due)`,
    },
  ];
}

const mib = (v: number) => v.toFixed(0);
/** MiB per minute: what a worker with healthy endpoints only stays well under (BENCH_FAIRNESS_RATE=0). */
const MEMORY_TREND_LIMIT = 5;

function fairnessRows(f: FairnessResult): Row[] {
  const { healthy, hanging, memory, written } = f;
  return [
    {
      figure: 'Fairness: healthy first attempts p99',
      value: healthy.p99Ms,
      unit: 'ms',
      target: { op: '<=', value: 2000 },
      note: `p50 ${Math.round(healthy.p50Ms)} / p95 ${Math.round(healthy.p95Ms)} / max ${Math.round(healthy.maxMs)} ms, created to received; ${f.healthyEndpoints} endpoints of ${f.issuers} issuers beside one that never answers, ${f.seconds} s`,
    },
    {
      figure: 'Fairness: healthy deliveries lost',
      value: healthy.lost,
      unit: 'deliveries',
      target: { op: '<=', value: 0 },
      note: `${healthy.received}/${healthy.expected} received within ${healthy.drainSeconds} s after the load (${written.healthy} webhooks), ${healthy.duplicates} twice`,
    },
    {
      figure: 'Fairness: worker memory trend',
      value: memory.slopeMiBPerMinute,
      unit: 'MiB/min',
      // "Flat", above the noise of the collector's cycles over a few minutes.
      target: { op: '<=', value: MEMORY_TREND_LIMIT },
      note: `RSS start ${mib(memory.startMiB)}, max ${mib(memory.maxMiB)}, end ${mib(memory.endMiB)} MiB; slope of ${memory.window.samples} samples from ${Math.round(memory.window.fromS)} s to ${Math.round(memory.window.toS)} s; ${f.retryWorkflowsRunning} retry workflows running at the end`,
    },
    {
      figure: 'Fairness: hanging endpoint, not attempted',
      value: hanging.pendingAtEnd,
      unit: 'deliveries',
      note: `of ${hanging.deliveries} written at ${f.hangingRate}/s; ${hanging.attempts} attempts recorded, ${hanging.requestsArrived} requests arrived; slowest write ${Math.round(written.slowestStatementMs)} ms`,
    },
  ];
}

/** A p99 over webhooks of which some never arrived is unbounded. */
const p99 = (r: EndToEndResult) => (r.sent - r.received > 0 ? Infinity : r.p99Ms);

function endToEndRows(config: BenchConfig, { e2e, e2eHalf, halfRate }: PhaseResults): Row[] {
  return [
    {
      figure: `End to end at ${config.e2eRate}/s: p50`,
      value: e2e.p50Ms,
      unit: 'ms',
      note: `${e2e.received}/${e2e.sent} webhooks received`,
    },
    {
      figure: `End to end at ${config.e2eRate}/s: p99`,
      value: p99(e2e),
      unit: 'ms',
      target: { op: '<=', value: 1000 },
      note: `max ${Math.round(e2e.maxMs)} ms over ${e2e.received} purchases${e2e.stages ? `; by stage, p50/p99 ms: ${describeStages(e2e.stages)}` : ''}${e2e.warmup ? `; the warm-up before it (${e2e.warmup.received} purchases, not counted): p50 ${Math.round(e2e.warmup.p50Ms)} / p99 ${Math.round(e2e.warmup.p99Ms)} ms` : ''}`,
    },
    {
      figure: `End to end at ${halfRate}/s (half sustained): p99`,
      value: p99(e2eHalf),
      unit: 'ms',
      target: { op: '<=', value: 2000 },
      note: `p50 ${Math.round(e2eHalf.p50Ms)} ms, ${e2eHalf.received}/${e2eHalf.sent} received`,
    },
  ];
}

function sustainedRows({ lifecycle, floor, drain }: PhaseResults): Row[] {
  const ratio = (lifecycle.steadyPerSecond / floor.steadyPerSecond) * 100;
  return [
    {
      figure: 'Sustained: lifecycle (steady 10-90%)',
      value: lifecycle.steadyPerSecond,
      floor: floor.steadyPerSecond,
      unit: 'events/s',
      note: `backlog ${lifecycle.offered}, ${lifecycle.completed} completed in ${lifecycle.seconds.toFixed(1)} s`,
    },
    {
      figure: 'Sustained: floor, empty workflow',
      value: floor.steadyPerSecond,
      unit: 'events/s',
      note: `${floor.completed}/${floor.offered} in ${floor.seconds.toFixed(1)} s`,
    },
    { figure: 'Sustained: lifecycle / floor', value: ratio, unit: '%', target: { op: '>=', value: 75 } },
    {
      figure: 'Backlog drained: still pending',
      value: drain.pending,
      unit: 'events',
      target: { op: '<=', value: 0 },
      note: `${drain.accepted} accepted`,
    },
    {
      figure: 'Backlog drained: trial balance',
      value: Math.abs(drain.trialBalanceMinor),
      unit: 'minor',
      target: { op: '<=', value: 0 },
      note: `${drain.entries} ledger entries`,
    },
  ];
}

/** Each CPU group's milliseconds per purchase, untraced → traced, over every round. */
function cpuGroupsNote(rounds: TracingResult['rounds']): string {
  const ms = (side: 'untraced' | 'traced', group: CpuGroup) =>
    (
      (rounds.reduce((s, r) => s + r[side].cpuSeconds[group], 0) / rounds.reduce((n, r) => n + r[side].completed, 0)) *
      1000
    ).toFixed(1);
  return CPU_GROUPS.map((group) => `${group} ${ms('untraced', group)} → ${ms('traced', group)}`).join(', ');
}

function tracingRows(t: TracingResult): Row[] {
  const { rounds, exported, drain } = t;
  const purchases = rounds.reduce((n, r) => n + r.traced.completed, 0);
  const services = Object.entries(exported.spansByService)
    .map(([service, n]) => `${service} ${(n / purchases).toFixed(1)}`)
    .join(', ');
  const spans =
    exported.spans === null
      ? `spans not counted (${t.protocol} is not decoded)`
      : `${exported.spans} spans${services ? ` (per purchase: ${services})` : ''}${exported.unreadable ? `, ${exported.unreadable} bodies unreadable` : ''}`;
  const perRound = rounds
    .map((r) => `${r.untraced.steadyPerSecond.toFixed(1)} → ${r.traced.steadyPerSecond.toFixed(1)}`)
    .join(', ');
  const msPerPurchase = (
    side: 'untraced' | 'traced',
    of: 'serviceCpuSeconds' | 'apiCpuSeconds' | 'machineCpuSeconds',
  ) =>
    ((rounds.reduce((s, r) => s + r[side][of], 0) / rounds.reduce((n, r) => n + r[side].completed, 0)) * 1000).toFixed(
      1,
    );
  const shares = tracingShares(rounds);
  const mean = (side: 'untraced' | 'traced') => rounds.reduce((s, r) => s + r[side].steadyPerSecond, 0) / rounds.length;
  return [
    {
      figure: 'Tracing: lifecycle, traced (steady 10-90%)',
      value: mean('traced'),
      floor: mean('untraced'),
      unit: 'events/s',
      note: `mean of ${rounds.length} rounds of ${t.rounds[0].traced.offered}, untraced and traced in alternating order on restarted processes (untraced → traced events/s: ${perRound}), exported over OTLP ${t.protocol}${t.calibration ? ' (CALIBRATION: the traced side ran with OTEL_SDK_DISABLED=true, tracing off on both sides)' : ''}; pending after drain ${drain.pending}, trial balance ${drain.trialBalanceMinor}`,
    },
    {
      figure: 'Tracing: traced / untraced lifecycle',
      value: shares.throughputPct,
      unit: '%',
      target: { op: '>=', value: 95 },
    },
    {
      figure: 'Tracing: service CPU per purchase, traced / untraced',
      value: shares.cpuPct,
      unit: '%',
      note: `API and worker processes: ${msPerPurchase('traced', 'serviceCpuSeconds')} ms traced (API ${msPerPurchase('traced', 'apiCpuSeconds')}), ${msPerPurchase('untraced', 'serviceCpuSeconds')} ms untraced (API ${msPerPurchase('untraced', 'apiCpuSeconds')})`,
    },
    {
      figure: 'Tracing: machine CPU per purchase, traced / untraced',
      value: shares.machineCpuPct,
      unit: '%',
      note: `every process on the machine: ${msPerPurchase('traced', 'machineCpuSeconds')} ms traced, ${msPerPurchase('untraced', 'machineCpuSeconds')} ms untraced; by group, untraced → traced ms: ${cpuGroupsNote(rounds)}`,
    },
    {
      figure: 'Tracing: spans exported per purchase',
      value: exported.spans === null ? NaN : exported.spans / purchases,
      unit: 'spans',
      note: `${spans}, in ${exported.requests} requests, for ${purchases} purchases`,
    },
    {
      figure: 'Tracing: bytes exported per purchase',
      value: exported.bytes / purchases,
      unit: 'bytes',
      note: `${(exported.bytes / 2 ** 20).toFixed(1)} MiB in ${exported.requests} requests (${t.protocol})`,
    },
  ];
}

function budgetRows(b: BudgetResult): Row[] {
  const { rounds, race, locks, drain } = b;
  const mean = (side: 'budgeted' | 'unbudgeted') =>
    rounds.reduce((s, r) => s + r[side].steadyPerSecond, 0) / rounds.length;
  const perRound = rounds
    .map((r) => `${r.unbudgeted.steadyPerSecond.toFixed(1)} → ${r.budgeted.steadyPerSecond.toFixed(1)}`)
    .join(', ');
  const lock = (workload: string, variant: string) =>
    locks.measurements.find((m) => m.workload === workload && m.variant === variant)!.perSecond;
  const lockNote = (workload: string) =>
    locks.measurements
      .filter((m) => m.workload === workload)
      .map((m) => `${m.variant} ${Math.round(m.perSecond)}`)
      .join(', ');
  return [
    {
      figure: 'Budgets: lifecycle at one budgeted offer (steady 10-90%)',
      value: mean('budgeted'),
      floor: mean('unbudgeted'),
      unit: 'events/s',
      note: `mean of ${rounds.length} rounds of ${rounds[0].budgeted.offered}, unbudgeted twin → budgeted: ${perRound}; pending after drain ${drain.pending}, trial balance ${drain.trialBalanceMinor}`,
    },
    {
      figure: 'Budgets: budgeted / unbudgeted lifecycle',
      value: budgetShare(rounds),
      unit: '%',
      target: { op: '>=', value: 90 },
    },
    {
      figure: 'Budgets: overspent in a race for half as much',
      value: race.overspentMinor,
      unit: 'minor',
      target: { op: '<=', value: 0 },
      note: `${race.purchases} purchases for a budget of ${race.budgetMinor}: ${race.rewarded} rewarded, ${race.refused} refused, used ${race.usedMinor}, earned ${race.earnedMinor}, in ${race.seconds.toFixed(1)} s`,
    },
    {
      figure: 'Budgets: budget row locked late, one issuer per client',
      value: lock('issuer per client', 'late'),
      floor: lock('issuer per client', 'none'),
      unit: 'tx/s',
      note: `${locks.clients} clients, ${locks.rounds} rounds of ${locks.seconds} s per variant (bench/budget-locks.ts), tx/s: ${lockNote('issuer per client')}; one issuer (its receivable shared too): ${lockNote('one issuer')}`,
    },
  ];
}

function statementRows(s: StatementResult): Row[] {
  return [
    {
      figure: `Statements: a month of ${s.transfers.toLocaleString('en-US')} transfers billed`,
      value: s.seconds,
      unit: 's',
      target: { op: '<=', value: 60 },
      note: `${s.statements} statements (${s.issuers} issuers x ${s.merchants} merchants) of ${s.period}, ${s.receivableTransfers} transfers on receivables; seeded in ${s.seedSeconds.toFixed(0)} s`,
    },
    {
      figure: 'Statements: totals off the receivables, transfers off',
      value: s.differenceMinor + Math.abs(s.transferCountDifference),
      unit: 'minor',
      target: { op: '<=', value: 0 },
      note: `billed ${s.totalDueMinor}; ${s.differenceMinor} minor units and ${s.transferCountDifference} transfers off`,
    },
  ];
}

function auditRows(a: AuditResult): Row[] {
  return [
    {
      figure: 'Audit: an audited operator call (PATCH a merchant), p99',
      value: a.callP99Ms,
      unit: 'ms',
      note: `${a.calls} calls one after another, p50 ${a.callP50Ms.toFixed(1)} ms`,
    },
    {
      figure: 'Audit: what the trail adds to a call (its row and the closing statement), p99',
      value: a.trailP99Ms,
      unit: 'ms',
      target: { op: '<=', value: 5 },
      note: `${a.trailSamples} samples on the same PostgreSQL, p50 ${a.trailP50Ms.toFixed(2)} ms; nothing turns the trail off, so the same call without it cannot run on this build`,
    },
    {
      figure: `Audit: verifying a chain of ${a.rows.toLocaleString('en-US')} rows`,
      value: a.verifySeconds,
      unit: 's',
      target: { op: '<=', value: 60 },
      note: `${a.verifiedRows} rows verified, ok ${a.ok}; the rows hashed here and inserted in ${a.seedSeconds.toFixed(0)} s`,
    },
  ];
}

/** Actions per purchase by billing rule, for a row's note. */
const rules = (c: PurchaseCost) =>
  Object.entries(c.byRule)
    .map(([rule, n]) => `${rule} ${Number(n.toFixed(1))}`)
    .join(', ');

function costRows(cost: CostResult): Row[] {
  return [
    {
      figure: 'Cost: actions per settled purchase',
      value: cost.settled.actions,
      unit: 'actions',
      target: { op: '<=', value: 4 },
      note: rules(cost.settled),
    },
    {
      figure: 'Cost: history events per settled',
      value: cost.settled.events,
      unit: 'events',
      note: `${cost.settled.purchases} purchases`,
    },
    {
      figure: 'Cost: actions per auth-then-settled',
      value: cost.authorizedThenSettled.actions,
      unit: 'actions',
      target: { op: '<=', value: 9 },
      note: rules(cost.authorizedThenSettled),
    },
    {
      figure: 'Cost: history events per auth-then-settled',
      value: cost.authorizedThenSettled.events,
      unit: 'events',
      note: `${cost.authorizedThenSettled.purchases} purchases`,
    },
  ];
}

function readRows({ reads, histories }: Pick<PhaseResults, 'reads' | 'histories'>): Row[] {
  const { readFloor, detail, summary, summaryShort, summaryLong } = reads;
  return [
    {
      figure: 'Reads: floor (bare server, one SELECT)',
      value: readFloor.requestsPerSecond,
      unit: 'req/s',
      note: `p99 ${readFloor.p99Ms.toFixed(1)} ms`,
    },
    {
      figure: 'Reads: reward-detail',
      value: detail.requestsPerSecond,
      floor: readFloor.requestsPerSecond,
      unit: 'req/s',
      note: `${detail.errors} errors`,
    },
    {
      figure: 'Reads: reward-detail / floor',
      value: (detail.requestsPerSecond / readFloor.requestsPerSecond) * 100,
      unit: '%',
      target: { op: '>=', value: 50 },
    },
    {
      figure: 'Reads: reward-detail p99',
      value: detail.p99Ms,
      unit: 'ms',
      target: { op: '<=', value: 25 },
      note: `p50 ${detail.p50Ms.toFixed(1)} ms`,
    },
    {
      figure: 'Reads: summary',
      value: summary.requestsPerSecond,
      unit: 'req/s',
      floor: readFloor.requestsPerSecond,
      note: `${summary.errors} errors`,
    },
    {
      figure: 'Reads: summary / floor',
      value: (summary.requestsPerSecond / readFloor.requestsPerSecond) * 100,
      unit: '%',
      target: { op: '>=', value: 50 },
    },
    {
      figure: 'Reads: summary p99',
      value: summary.p99Ms,
      unit: 'ms',
      target: { op: '<=', value: 25 },
      note: `p50 ${summary.p50Ms.toFixed(1)} ms`,
    },
    {
      figure: 'Summary p50, long / short history',
      value: summaryLong.p50Ms / summaryShort.p50Ms,
      unit: 'x',
      target: { op: '<=', value: 2 },
      note: `${histories.long.rewardEvents} events: p50 ${summaryLong.p50Ms.toFixed(1)} ms; ${histories.short.rewardEvents} events: p50 ${summaryShort.p50Ms.toFixed(1)} ms`,
    },
  ];
}

async function countHandedOver(databaseUrl: string, issuerId: string, prefix: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      // Handed over: out of the queue, or admitted (to_jsonb: code without admission has no such column).
      `SELECT count(*) AS n FROM ingested_event e
        WHERE e.issuer_id = $1 AND e.external_id LIKE $2
          AND NOT EXISTS (SELECT 1 FROM handover_pending p WHERE p.event_id = e.id AND to_jsonb(p)->>'admitted_at' IS NULL)`,
      [issuerId, `${prefix}%`],
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? err.stack : err);
    process.exit(1);
  },
);

interface FloorServer {
  url: string;
  stop(): Promise<void>;
}

/** The bare floor server (bench/floor-server.ts) in its own process, on the bench database. */
async function startFloorServer(stack: BenchStack): Promise<FloorServer> {
  const port = await freePort();
  const child = stack.spawnNode('bench/floor-server.ts', { PORT: String(port) });
  await childReady(child);
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolveStop) => {
        child.once('exit', () => resolveStop());
        child.kill('SIGTERM');
      }),
  };
}
