// The benchmark's knobs, read once from the environment and validated (every problem
// listed). How long a run takes with the defaults is in docs/benchmarks.md, from the recorded
// runs; the longest phases have knobs for a quick look (BENCH_FAIRNESS_SECONDS=30,
// BENCH_OVERLOAD_SECONDS=30, BENCH_DUMP_EVENTS).
import { ConfigError, loadConfig } from '../core/config';

/** OTLP encodings the tracing phase can export with (core/tracing.ts supports both). */
export const TRACING_PROTOCOLS = ['http/json', 'http/protobuf'] as const;
export type TracingProtocol = (typeof TRACING_PROTOCOLS)[number];

/** Where the stack's Temporal dev server keeps its state (bench/stack.ts). */
export const TEMPORAL_STORES = ['file', 'memory'] as const;
export type TemporalStore = (typeof TEMPORAL_STORES)[number];

export interface BenchConfig {
  /** Ingestion and each read phase. */
  seconds: number;
  e2eSeconds: number;
  e2eRate: number;
  /** Sent at the same rate before the measured window, and reported apart: the first purchases after the floor. */
  e2eWarmupSeconds: number;
  /** Settled events offered at once to the lifecycle, and empty workflows to the floor. */
  backlog: number;
  /** Purchases of each kind whose histories are counted for the cost figures. */
  costPurchases: number;
  /** Purchases of the long-history group (about three reward events each). */
  historyPurchases: number;
  /**
   * Grants whose reward_available notice is due, for the notices scan; at most what one
   * ExpireGrants run handles (50 batches of 200).
   */
  noticeGrants: number;
  /** The fairness phase's load: one endpoint that never answers beside 20 healthy ones. */
  fairnessSeconds: number;
  /** Webhooks per second to the endpoint that never answers (0: the healthy ones alone, a control). */
  fairnessHangingRate: number;
  /** How long after the load the healthy endpoints' webhooks may still arrive. */
  fairnessDrainSeconds: number;
  /** The overload phase: how long purchases are offered above the sustained rate. */
  overloadSeconds: number;
  /** ... at this share of the same run's sustained lifecycle rate, in per cent (200: twice). */
  overloadPercent: number;
  /** ... that rate measured right before the load: a closed backlog of this many purchases. */
  overloadReferenceBacklog: number;
  /** The payout phase: groups with payable cashback each run pays. */
  payoutGroups: number;
  /** ... and how long pgbench runs beside it, on the same PostgreSQL. */
  pgbenchSeconds: number;
  /** The issuer fairness phase: the big issuer's backlog, in settled events. */
  dumpEvents: number;
  /** ... the window over which the small issuer sends and its latency is measured. */
  issuerFairnessSeconds: number;
  /** ... the small issuer's events per second. */
  smallIssuerRate: number;
  /** Settled events offered at once to each of the tracing phase's drains, traced and untraced. */
  tracingBacklog: number;
  /**
   * Rounds of the tracing phase, each an untraced drain and a traced one. Even, so that each side
   * drains first as often as second: every drain is slower than the one before (bench/tracing.ts);
   * six, because one drain's rate swings by several per cent on its own.
   */
  tracingRounds: number;
  /**
   * OTEL_EXPORTER_OTLP_PROTOCOL of the traced processes. http/json by default: the bench's sink
   * counts the spans of a JSON body without decoding protobuf; http/protobuf (the service's
   * default) is counted in requests and bytes only.
   */
  tracingProtocol: TracingProtocol;
  /**
   * A calibration of the tracing phase (BENCH_TRACING_CALIBRATION=1): the "traced" drains run
   * with OTEL_SDK_DISABLED=true, so both sides run the same code and the figure shows what the
   * procedure and the machine alone make of two equal sides.
   */
  tracingCalibration: boolean;
  /** Settled events of each drain of the budget phase, budgeted and unbudgeted. */
  budgetBacklog: number;
  /** Rounds of the budget phase, each a budgeted and an unbudgeted drain; even, like the tracing phase's. */
  budgetRounds: number;
  /** Purchases racing for a budget that covers half of them. */
  budgetRacePurchases: number;
  /** Each variant's run in the budget-lock measurement (bench/budget-locks.ts), and its rounds. */
  budgetLockSeconds: number;
  budgetLockRounds: number;
  /** Settled events of each drain of the targeting phase, at the targeted merchant and at its untargeted twin. */
  targetingBacklog: number;
  /** Rounds of the targeting phase, each a targeted and an untargeted drain; even, like the budget phase's. */
  targetingRounds: number;
  /** Live targeted offers a group's offer list is read over. */
  targetingOffers: number;
  /** Groups seeded for the enrolment run and the lift report. */
  targetingGroups: number;
  /** Settled purchases seeded at the targeted merchant for the lift report (a share of the groups buys). */
  targetingLiftPurchases: number;
  /** Ledger transfers of the month the statement phase bills, and the issuers and merchants they are spread over. */
  statementTransfers: number;
  /** Rows of the audit trail the audit phase chains and verifies. */
  auditRows: number;
  statementIssuers: number;
  statementMerchants: number;
  drainTimeoutSeconds: number;
  groups: number;
  ingestClients: number;
  batchSize: number;
  readConnections: number;
  /** Watchdog: the whole run stops after this, whatever happens. */
  maxSeconds: number;
  /**
   * The dev server's store: a SQLite file in the stack's folder, as `npm start` runs it (default),
   * or memory, as the bench ran it before (docs/decisions/0048-bench-temporal-on-a-file.md).
   */
  temporalStore: TemporalStore;
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const flag = (name: string) => {
    const raw = env[name];
    if (raw === undefined || raw === '' || raw === '0') return false;
    if (raw !== '1') problems.push(`${name} must be 1 or 0 (got "${raw}")`);
    return raw === '1';
  };
  const seconds = int('BENCH_SECONDS', 15, 1, 600);
  const backlog = int('BENCH_BACKLOG', 5000, 100, 100_000);
  const tracingProtocol = env.BENCH_TRACING_PROTOCOL || 'http/json';
  if (!TRACING_PROTOCOLS.includes(tracingProtocol as TracingProtocol))
    problems.push(`BENCH_TRACING_PROTOCOL must be one of ${TRACING_PROTOCOLS.join(', ')} (got "${tracingProtocol}")`);
  const temporalStore = env.BENCH_TEMPORAL_STORE || 'file';
  if (!TEMPORAL_STORES.includes(temporalStore as TemporalStore))
    problems.push(`BENCH_TEMPORAL_STORE must be one of ${TEMPORAL_STORES.join(', ')} (got "${temporalStore}")`);
  const config: BenchConfig = {
    seconds,
    e2eSeconds: int('BENCH_E2E_SECONDS', 30, 1, 600),
    e2eRate: int('BENCH_E2E_RATE', 10, 1, 1000),
    e2eWarmupSeconds: int('BENCH_E2E_WARMUP_SECONDS', 10, 0, 600),
    backlog,
    costPurchases: int('BENCH_COST_PURCHASES', 5, 1, 100),
    historyPurchases: int('BENCH_HISTORY_PURCHASES', 3400, 10, 100_000),
    noticeGrants: int('BENCH_NOTICE_GRANTS', 10_000, 100, 10_000),
    fairnessSeconds: int('BENCH_FAIRNESS_SECONDS', 300, 10, 3600),
    fairnessHangingRate: int('BENCH_FAIRNESS_RATE', 100, 0, 1000),
    fairnessDrainSeconds: int('BENCH_FAIRNESS_DRAIN_SECONDS', 60, 5, 600),
    overloadSeconds: int('BENCH_OVERLOAD_SECONDS', 180, 10, 3600),
    overloadPercent: int('BENCH_OVERLOAD_PERCENT', 200, 100, 1000),
    overloadReferenceBacklog: int('BENCH_OVERLOAD_REFERENCE_BACKLOG', 2000, 100, 100_000),
    payoutGroups: int('BENCH_PAYOUT_GROUPS', 100_000, 100, 1_000_000),
    pgbenchSeconds: int('BENCH_PGBENCH_SECONDS', 30, 5, 600),
    dumpEvents: int('BENCH_DUMP_EVENTS', 50_000, 1000, 1_000_000),
    issuerFairnessSeconds: int('BENCH_ISSUER_FAIRNESS_SECONDS', 120, 10, 3600),
    smallIssuerRate: int('BENCH_SMALL_ISSUER_RATE', 2, 1, 100),
    tracingBacklog: int('BENCH_TRACING_BACKLOG', 1500, 100, 100_000),
    tracingRounds: int('BENCH_TRACING_ROUNDS', 6, 1, 10),
    tracingProtocol: tracingProtocol as TracingProtocol,
    tracingCalibration: flag('BENCH_TRACING_CALIBRATION'),
    budgetBacklog: int('BENCH_BUDGET_BACKLOG', 2000, 100, 100_000),
    budgetRounds: int('BENCH_BUDGET_ROUNDS', 2, 1, 10),
    budgetRacePurchases: int('BENCH_BUDGET_RACE', 2000, 10, 100_000),
    budgetLockSeconds: int('BENCH_BUDGET_LOCK_SECONDS', 8, 1, 600),
    budgetLockRounds: int('BENCH_BUDGET_LOCK_ROUNDS', 2, 1, 10),
    targetingBacklog: int('BENCH_TARGETING_BACKLOG', 2000, 100, 100_000),
    targetingRounds: int('BENCH_TARGETING_ROUNDS', 2, 1, 10),
    targetingOffers: int('BENCH_TARGETING_OFFERS', 500, 5, 5000),
    targetingGroups: int('BENCH_TARGETING_GROUPS', 1_000_000, 1000, 10_000_000),
    targetingLiftPurchases: int('BENCH_TARGETING_LIFT_PURCHASES', 200_000, 100, 10_000_000),
    statementTransfers: int('BENCH_STATEMENT_TRANSFERS', 1_000_000, 1000, 10_000_000),
    auditRows: int('BENCH_AUDIT_ROWS', 1_000_000, 1000, 10_000_000),
    statementIssuers: int('BENCH_STATEMENT_ISSUERS', 10, 1, 1000),
    statementMerchants: int('BENCH_STATEMENT_MERCHANTS', 100, 1, 10_000),
    drainTimeoutSeconds: int('BENCH_DRAIN_TIMEOUT_SECONDS', 400, 10, 1800),
    groups: int('BENCH_GROUPS', 50, 1, 1000),
    ingestClients: int('BENCH_INGEST_CLIENTS', 8, 1, 64),
    batchSize: int('BENCH_BATCH_SIZE', 100, 1, 1000),
    readConnections: int('BENCH_READ_CONNECTIONS', 32, 1, 256),
    maxSeconds: int('BENCH_MAX_SECONDS', 4500, 60, 7200),
    temporalStore: temporalStore as TemporalStore,
  };
  try {
    serviceLogLevel(env);
  } catch (err) {
    problems.push(...(err instanceof ConfigError ? err.problems : [String(err)]).map((p) => `BENCH_LOG_LEVEL: ${p}`));
  }
  if (problems.length > 0) throw new Error(`Invalid benchmark configuration:\n  - ${problems.join('\n  - ')}`);
  return config;
}

/**
 * LOG_LEVEL of the API and the worker: BENCH_LOG_LEVEL when set, else the service's own default
 * (what `npm start` runs), as core/config.ts reads and checks it, not a copy of it here.
 */
export function serviceLogLevel(env: NodeJS.ProcessEnv = process.env): string {
  return loadConfig({ LOG_LEVEL: env.BENCH_LOG_LEVEL }).logLevel;
}
