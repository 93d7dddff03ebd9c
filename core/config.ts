import os from 'node:os';
import { parseKeyRing, type KeyRing } from './crypto/key-ring';
import { DURATION_SYNTAX, formatDuration, parseDuration } from './duration';
import { DEFAULT_SETTLEMENT_TIMEOUT_MS } from '../workflows/lifecycle-signals';
import {
  DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS,
  MAX_WEBHOOK_RETRIES,
  MAX_WEBHOOK_RETRY_WAIT_MS,
} from '../workflows/webhook-delivery-contract';
import {
  DEFAULT_ENDPOINT_DISABLE_AFTER_MS,
  MAX_ENDPOINT_DISABLE_AFTER_MS,
  MIN_ENDPOINT_DISABLE_AFTER_MS,
} from './webhooks/endpoint-health';
import { readTemporalSettings, type TemporalSettings } from './temporal-config';
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from '../prisma/bounded-client';
import { DEFAULT_MIGRATION_LOCK_TIMEOUT_MS } from '../prisma/migration-sql';

// The service's own settings, read from the environment once: every variable is validated up
// front and all problems are reported together, so a bad deployment fails at start, not at 3 a.m.
// Two kinds of variable are read elsewhere, as their libraries define them: OpenTelemetry's
// OTEL_* by core/tracing.ts and the OpenTelemetry SDK, and NODE_ENV by the logger
// (core/log-format.ts: readable lines in a terminal, never in production). The processes hand
// LOG_LEVEL from here to the logger. docs/operating/configuration.md lists them all.

export interface Config {
  port: number;
  host: string;
  /** API processes sharing the port (node:cluster); each has its own database pool. */
  apiProcesses: number;
  /** The young generation's semi-space of each API copy, MB (api/copy-node-flags.ts); 0 is Node's own. */
  apiSemiSpaceMb: number;
  databaseUrl?: string;
  databasePoolSize: number;
  /** Opening a database connection (prisma/bounded-client.ts). */
  databaseConnectTimeoutMs: number;
  /** A statement of the API's; a request whose database stops answering gets its 503 about a second after. */
  apiDatabaseStatementTimeoutMs: number;
  /** A statement of the worker's (its steps wait on hot rows' locks under load). */
  workerDatabaseStatementTimeoutMs: number;
  /** A transaction: Prisma's interactive transaction time-out, and the server's idle-in-transaction one. */
  databaseTransactionTimeoutMs: number;
  temporalAddress?: string;
  temporalNamespace: string;
  temporalTaskQueue: string;
  temporalApiKey?: string;
  temporalTls: boolean;
  /** Everything the connection to Temporal needs (core/temporal-config.ts; core/temporal-connection.ts builds it). */
  temporal: TemporalSettings;
  temporalCli?: string;
  /**
   * `npm start` loads the sandbox catalogue and issuer: by default only into its embedded
   * database; true allows it into DATABASE_URL, false skips it (scripts/start.ts).
   */
  seedSandbox?: boolean;
  operatorToken?: string;
  /**
   * OPERATOR_ROOT: whether OPERATOR_TOKEN opens the operator API as the break-glass account
   * `root` (every role). A deployment switches it off (`disabled`) once named admins exist;
   * OPERATOR_TOKEN is then not needed.
   */
  operatorRootEnabled: boolean;
  /** When set, GET /metrics of the API needs it as a bearer token. */
  metricsToken?: string;
  logLevel: string;
  dataDir: string;
  embeddedPgPort: number;
  temporalDevPort: number;
  temporalUiPort: number;
  workerMetricsPort: number;
  temporalMetricsPort: number;
  /** How long a previewed authorization waits for its settlement; new purchases only. */
  settlementTimeoutMs: number;
  /** Waits between webhook delivery attempts; new deliveries and replays only. */
  webhookRetryScheduleMs: number[];
  /** Groups a payout run pays per chunk (one transaction, one activity); new runs only. */
  payoutChunkGroups: number;
  /** Merchant receivables a statement run bills per chunk (one transaction, one activity); new runs only. */
  statementChunkAccounts: number;
  /**
   * Webhook endpoints may point at loopback and private addresses (local receivers). Off by
   * default, forbidden with NODE_ENV=production; the embedded dev stack turns it on (devStackEnv).
   */
  webhookAllowPrivateDestinations: boolean;
  /** WEBHOOK_ENDPOINT_DISABLE_AFTER: failing this long disables an endpoint; null: never. */
  webhookEndpointDisableAfterMs: number | null;
  /**
   * Keys that seal webhook signing secrets at rest (core/webhooks/secret-sealing.ts): the first
   * seals, all open. Required by the API and the worker; `npm start` generates one into
   * .data/webhook-secret-key.
   */
  webhookSecretKeys?: KeyRing;
  /**
   * Purchases handed over to Temporal and not yet finished, across the deployment: the rest wait
   * in PostgreSQL (core/domain/handover-admission.ts, docs/decisions/0037-admission-at-the-hand-over.md).
   */
  handoverMaxInFlight: number;
  /** Events of one issuer waiting for admission past which its ingestion answers 429 backlog_full; per-issuer override. */
  ingestionBacklogLimit: number;
  /** Default rate limits per issuer token; an issuer's override replaces them (api/middleware/rate-limit.ts). */
  rateLimits: { requestsPerSecond: number; eventsPerSecond: number; windowSeconds: number };
  /** On SIGTERM the API answers /readyz 503 this long before it closes its port (api/shutdown.ts). */
  shutdownDrainDelayMs: number;
  /** Then requests in flight have this long to finish before their connections are cut. */
  apiShutdownGraceMs: number;
  /** The worker's running activities have this long to finish on SIGTERM before they are cancelled. */
  workerShutdownGraceMs: number;
  /** How long a migration waits for each lock before it fails (prisma/migrate.ts); 0: no limit. */
  migrationLockTimeoutMs: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** HANDOVER_MAX_IN_FLIGHT's default (docs/decisions/0037-admission-at-the-hand-over.md). */
export const DEFAULT_HANDOVER_MAX_IN_FLIGHT = 32;
/** INGESTION_BACKLOG_LIMIT's default: a day of files of a mid-size issuer (docs/decisions/0037-admission-at-the-hand-over.md). */
export const DEFAULT_INGESTION_BACKLOG_LIMIT = 100_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

// A minute is the least a card network settles in; beyond 90 days an authorization has long
// expired at every scheme, so a larger value is a typo that would keep runs open for months.
const MIN_SETTLEMENT_TIMEOUT_MS = 60_000;
/** Groups per chunk of a payout run: one transaction and one Temporal activity each. */
export const DEFAULT_PAYOUT_CHUNK_GROUPS = 1000;
/** Merchant receivables per chunk of a statement run: one transaction and one Temporal activity each. */
export const DEFAULT_STATEMENT_CHUNK_ACCOUNTS = 200;
const MAX_SETTLEMENT_TIMEOUT_MS = 90 * 86_400_000;

/** Typed readers of the environment; each bad value adds a problem and yields the fallback. */
function envReader(env: NodeJS.ProcessEnv, problems: string[]) {
  const str = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
      return fallback;
    }
    return value;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (raw === 'true' || raw === '1') return true;
    if (raw === 'false' || raw === '0') return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };
  const duration = (name: string, fallback: number, min: number, max: number): number => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    const ms = parseDuration(raw);
    if (ms === undefined || ms < min || ms > max) {
      problems.push(
        `${name} must be ${DURATION_SYNTAX}, from ${formatDuration(min)} to ${formatDuration(max)} (got "${raw}")`,
      );
      return fallback;
    }
    return ms;
  };
  // The workflow refuses a schedule outside these limits, so a bad one is caught here at start
  // rather than by the first webhook that fails.
  const schedule = (name: string, fallback: readonly number[]): number[] => {
    const raw = str(name);
    if (raw === undefined) return [...fallback];
    const waits = raw.split(',').map(parseDuration);
    const valid =
      waits.length <= MAX_WEBHOOK_RETRIES && waits.every((ms) => ms !== undefined && ms <= MAX_WEBHOOK_RETRY_WAIT_MS);
    if (!valid) {
      problems.push(
        `${name} must be 1 to ${MAX_WEBHOOK_RETRIES} comma-separated waits of 0s to ${formatDuration(MAX_WEBHOOK_RETRY_WAIT_MS)}, each ${DURATION_SYNTAX} (got "${raw}")`,
      );
      return [...fallback];
    }
    return waits as number[];
  };
  /** A duration, or `never` (null). */
  const durationOrNever = (name: string, fallback: number, min: number, max: number): number | null =>
    str(name) === 'never' ? null : duration(name, fallback, min, max);
  return { str, int, bool, duration, durationOrNever, schedule };
}

type EnvReader = ReturnType<typeof envReader>;

/** The settings checked beyond their type: URLs, token lengths, levels, secrets and what they allow. */
function checkedSettings(env: NodeJS.ProcessEnv, { str, bool }: EnvReader, problems: string[]) {
  const databaseUrl = str('DATABASE_URL');
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgresql:// URL');
  }
  const operatorToken = str('OPERATOR_TOKEN');
  if (operatorToken !== undefined && operatorToken.length < 32) {
    problems.push('OPERATOR_TOKEN must be at least 32 characters');
  }
  const operatorRoot = str('OPERATOR_ROOT') ?? 'enabled';
  if (!['enabled', 'disabled'].includes(operatorRoot)) {
    problems.push(`OPERATOR_ROOT must be enabled or disabled (got "${operatorRoot}")`);
  }
  const metricsToken = str('METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 32) {
    problems.push('METRICS_TOKEN must be at least 32 characters');
  }
  const logLevel = str('LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  // TEMPORAL_TLS is checked here (true/false); @temporalio/envconfig reads it with the rest.
  bool('TEMPORAL_TLS', false);
  const temporal = readTemporalSettings(env, problems);
  const seedSandbox = str('SEED_SANDBOX') === undefined ? undefined : bool('SEED_SANDBOX', false);
  // Webhooks must not reach inside the network a production deployment runs in.
  const webhookAllowPrivateDestinations = bool('WEBHOOK_ALLOW_PRIVATE_DESTINATIONS', false);
  if (webhookAllowPrivateDestinations && env.NODE_ENV === 'production') {
    problems.push(
      'WEBHOOK_ALLOW_PRIVATE_DESTINATIONS must not be true when NODE_ENV=production (it lets webhooks reach internal addresses)',
    );
  }
  // Never echoed in a problem: it is key material.
  const webhookSecretKeysText = str('WEBHOOK_SECRET_KEYS');
  const webhookSecretKeys =
    webhookSecretKeysText === undefined ? undefined : parseKeyRing('WEBHOOK_SECRET_KEYS', webhookSecretKeysText);
  problems.push(...(webhookSecretKeys?.problems ?? []));
  return {
    databaseUrl,
    operatorToken,
    operatorRootEnabled: operatorRoot !== 'disabled',
    metricsToken,
    logLevel,
    temporal,
    seedSandbox,
    webhookAllowPrivateDestinations,
    webhookSecretKeys: webhookSecretKeys?.ring,
  };
}

/**
 * A host that stops answering must cost a request seconds, not TCP's minutes
 * (prisma/bounded-client.ts). The API's statements take milliseconds: a few seconds is already a
 * fault. The worker's default is the bound its steps always had (they may wait on a hot row's lock).
 */
function databaseBounds({ int }: EnvReader) {
  return {
    databaseConnectTimeoutMs: int(
      'DATABASE_CONNECT_TIMEOUT_MS',
      DEFAULT_DATABASE_TIMEOUTS.connectTimeoutMs,
      100,
      600_000,
    ),
    apiDatabaseStatementTimeoutMs: int('API_DATABASE_STATEMENT_TIMEOUT_MS', 5_000, 100, 3_600_000),
    workerDatabaseStatementTimeoutMs: int(
      'WORKER_DATABASE_STATEMENT_TIMEOUT_MS',
      DEFAULT_DATABASE_TIMEOUTS.statementTimeoutMs,
      100,
      3_600_000,
    ),
    databaseTransactionTimeoutMs: int(
      'DATABASE_TRANSACTION_TIMEOUT_MS',
      DEFAULT_DATABASE_TIMEOUTS.transactionTimeoutMs,
      100,
      3_600_000,
    ),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const read = envReader(env, problems);
  const checked = checkedSettings(env, read, problems);
  const { temporal } = checked;
  const config: Config = {
    port: read.int('PORT', 3000, 0, 65535),
    // One API process per core (up to 8): a Node process runs its JavaScript on one core, so it
    // takes one per core for the API to use them all (docs/operating/deploy.md, "Sizing").
    apiProcesses: read.int('API_PROCESSES', Math.min(os.availableParallelism(), 8), 1, 64),
    apiSemiSpaceMb: read.int('API_SEMI_SPACE_MB', 64, 0, 1024),
    host: read.str('HOST') ?? '0.0.0.0',
    databaseUrl: checked.databaseUrl,
    databasePoolSize: read.int('DATABASE_POOL_SIZE', 10, 1, 500),
    ...databaseBounds(read),
    temporalAddress: temporal.profile.address,
    temporalNamespace: temporal.profile.namespace ?? 'default',
    temporalTaskQueue: read.str('TEMPORAL_TASK_QUEUE') ?? 'rewards',
    temporalApiKey: temporal.profile.apiKey,
    temporalTls: temporal.tls,
    temporal,
    temporalCli: read.str('TEMPORAL_CLI'),
    seedSandbox: checked.seedSandbox,
    operatorToken: checked.operatorToken,
    operatorRootEnabled: checked.operatorRootEnabled,
    metricsToken: checked.metricsToken,
    logLevel: checked.logLevel,
    dataDir: read.str('DATA_DIR') ?? '.data',
    embeddedPgPort: read.int('EMBEDDED_PG_PORT', 54329, 1, 65535),
    temporalDevPort: read.int('TEMPORAL_DEV_PORT', 7233, 1, 65535),
    temporalUiPort: read.int('TEMPORAL_UI_PORT', 8233, 1, 65535),
    workerMetricsPort: read.int('WORKER_METRICS_PORT', 9464, 0, 65535),
    temporalMetricsPort: read.int('TEMPORAL_METRICS_PORT', 9465, 0, 65535),
    settlementTimeoutMs: read.duration(
      'SETTLEMENT_TIMEOUT',
      DEFAULT_SETTLEMENT_TIMEOUT_MS,
      MIN_SETTLEMENT_TIMEOUT_MS,
      MAX_SETTLEMENT_TIMEOUT_MS,
    ),
    webhookRetryScheduleMs: read.schedule('WEBHOOK_RETRY_SCHEDULE', DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS),
    // A chunk holds its groups' cashback accounts locked until it commits (core/domain/payouts.ts).
    payoutChunkGroups: read.int('PAYOUT_CHUNK_GROUPS', DEFAULT_PAYOUT_CHUNK_GROUPS, 1, 10_000),
    // A chunk reads its receivables' unbilled transfers in one statement (core/domain/statements.ts).
    statementChunkAccounts: read.int('STATEMENT_CHUNK_ACCOUNTS', DEFAULT_STATEMENT_CHUNK_ACCOUNTS, 1, 10_000),
    webhookAllowPrivateDestinations: checked.webhookAllowPrivateDestinations,
    // An endpoint whose attempts have all failed for this long is disabled; null: never.
    webhookEndpointDisableAfterMs: read.durationOrNever(
      'WEBHOOK_ENDPOINT_DISABLE_AFTER',
      DEFAULT_ENDPOINT_DISABLE_AFTER_MS,
      MIN_ENDPOINT_DISABLE_AFTER_MS,
      MAX_ENDPOINT_DISABLE_AFTER_MS,
    ),
    webhookSecretKeys: checked.webhookSecretKeys,
    // Measured (docs/decisions/0037-admission-at-the-hand-over.md): enough purchases in flight to keep a
    // worker's slots busy, few enough that none waits long inside Temporal. Raise it with the workers.
    handoverMaxInFlight: read.int('HANDOVER_MAX_IN_FLIGHT', DEFAULT_HANDOVER_MAX_IN_FLIGHT, 1, 100_000),
    ingestionBacklogLimit: read.int('INGESTION_BACKLOG_LIMIT', DEFAULT_INGESTION_BACKLOG_LIMIT, 1, 100_000_000),
    // Published defaults (docs/operating/security.md, "Rate limits"): well above what one issuer's integration needs,
    // low enough that one token cannot take a host's capacity. npm run bench raises them.
    rateLimits: {
      requestsPerSecond: read.int('RATE_LIMIT_REQUESTS_PER_SECOND', 100, 1, 1_000_000),
      eventsPerSecond: read.int('RATE_LIMIT_EVENTS_PER_SECOND', 2000, 1, 10_000_000),
      windowSeconds: read.int('RATE_LIMIT_WINDOW_SECONDS', 1, 1, 60),
    },
    // Rolling deploys (docs/operating/runbook.md, "Shutdown and probes"): long enough for a load balancer probing
    // every few seconds to see the 503, and for a request or an activity to end on its own.
    shutdownDrainDelayMs: read.duration('SHUTDOWN_DRAIN_DELAY', 5_000, 0, 300_000),
    apiShutdownGraceMs: read.duration('API_SHUTDOWN_GRACE', 10_000, 1_000, 600_000),
    workerShutdownGraceMs: read.duration('WORKER_SHUTDOWN_GRACE', 30_000, 1_000, 3_600_000),
    // npm run migrate (docs/operating/upgrading.md, "Migrations that cannot lock a busy table"); 0s: no limit.
    migrationLockTimeoutMs: read.duration('MIGRATION_LOCK_TIMEOUT', DEFAULT_MIGRATION_LOCK_TIMEOUT_MS, 0, 600_000),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * The environment of the embedded dev stack (`npm start`), unless a variable says otherwise:
 * webhooks may go to receivers on the developer's machine, and the API stops without waiting
 * for a load balancer (there is none).
 */
export function devStackEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const stack: NodeJS.ProcessEnv = { ...env };
  const defaults = { WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true', SHUTDOWN_DRAIN_DELAY: '0s' };
  for (const [name, value] of Object.entries(defaults))
    if (stack[name] === undefined || stack[name] === '') stack[name] = value;
  return stack;
}

/** The bounds of every database connection of the API or the worker process. */
export function databaseTimeouts(config: Config, process: 'api' | 'worker'): DatabaseTimeouts {
  return {
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs:
      process === 'api' ? config.apiDatabaseStatementTimeoutMs : config.workerDatabaseStatementTimeoutMs,
    transactionTimeoutMs: config.databaseTransactionTimeoutMs,
  };
}

export type ServiceConfig = Config & { databaseUrl: string; temporalAddress: string; webhookSecretKeys: KeyRing };

/**
 * For the processes that cannot run without their backing services and keys (API, worker).
 * Both handle webhook signing secrets: the API seals them, the worker opens them to sign.
 */
export function requireConnections(config: Config): ServiceConfig {
  const missing = [
    config.databaseUrl ? null : 'DATABASE_URL is required (npm start sets it for the embedded database)',
    config.temporalAddress
      ? null
      : 'TEMPORAL_ADDRESS (or the address of the TEMPORAL_PROFILE profile) is required (npm start sets it for the dev server)',
    config.webhookSecretKeys
      ? null
      : 'WEBHOOK_SECRET_KEYS is required: <id>:<base64 of 32 random bytes>, e.g. k1:$(openssl rand -base64 32) (npm start generates one into .data/webhook-secret-key)',
  ].filter((p): p is string => p !== null);
  if (missing.length > 0) throw new ConfigError(missing);
  return config as ServiceConfig;
}
