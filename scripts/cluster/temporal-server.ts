// A real Temporal server for the production-like cluster (docs/operating/runbook.md, "Production-like cluster"):
// the server and its SQL schema tool built from the Go module proxy (pinned, cached under
// .tools), PostgreSQL persistence and PostgreSQL visibility in two databases of their own
// owned by their own role, 4 history shards, every service on a loopback port of its own,
// then the `default` namespace and our search attributes. Unlike the CLI dev server of
// `npm start` and `npm test`, this is the server binary a self-hosted deployment runs.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { registerSearchAttributes } from '../../worker/register-search-attributes';
import { CLOSED_WORKFLOW_RETENTION_DAYS } from '../../worker/namespace-retention';
import { SEARCH_ATTRIBUTE_DECLARATIONS } from '../../workflows/search-attributes';
import { stopChild } from '../lib/temporal-dev-server';
import { toYaml } from './yaml';

const ROOT = resolve(__dirname, '..', '..');
const run = promisify(execFile);

/**
 * The newest server release that builds here. A change of version is a change of
 * this line (and a fresh build, into a folder of its own).
 */
export const TEMPORAL_SERVER_VERSION = 'v1.32.2';
/**
 * The Go toolchain it is built with: the version its go.mod asks for (newer than the machine's
 * Go 1.26.8), fetched by `go install` through the module proxy. Pinned rather than
 * GOTOOLCHAIN=auto, which takes the newest patch release and so changes under us: the same
 * toolchain gives byte-identical binaries, and a rebuild with Go's build cache takes 20 s
 * instead of 9 to 14 minutes.
 */
const GO_TOOLCHAIN = 'go1.26.10';
const MODULE = 'go.temporal.io/server';
/** Shards are fixed when a cluster is created; 4 is the least that exercises routing between them. */
export const HISTORY_SHARDS = 4;
// The embedded schemas of the sql tool, as built with the same version as the server.
const SCHEMAS = { temporal: 'postgresql/v12/temporal', visibility: 'postgresql/v12/visibility' };

export interface TemporalBinaries {
  server: string;
  sqlTool: string;
}

/** The binaries under .tools/temporal-server-<version>/, built by `go install` when missing. */
export async function ensureTemporalBinaries(log: (line: string) => void): Promise<TemporalBinaries> {
  const dir = join(ROOT, '.tools', `temporal-server-${TEMPORAL_SERVER_VERSION}`);
  const binaries = { server: join(dir, 'server'), sqlTool: join(dir, 'sql') };
  if (existsSync(binaries.server) && existsSync(binaries.sqlTool)) return binaries;
  mkdirSync(dir, { recursive: true });
  log(
    `building Temporal server ${TEMPORAL_SERVER_VERSION} and its sql tool with go install and ${GO_TOOLCHAIN} (9 to 14 minutes on 2 cores without Go's build cache)`,
  );
  const started = Date.now();
  await new Promise<void>((resolveBuild, reject) => {
    const child = spawn(
      goBinary(),
      [
        'install',
        `${MODULE}/cmd/server@${TEMPORAL_SERVER_VERSION}`,
        `${MODULE}/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
      ],
      {
        env: { ...process.env, GOBIN: dir, GOTOOLCHAIN: GO_TOOLCHAIN, GOFLAGS: '-buildvcs=false' },
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    child.once('error', (err) => reject(new Error(`go install could not start (is Go installed?): ${err.message}`)));
    child.once('exit', (code) => (code === 0 ? resolveBuild() : reject(new Error(`go install exited with ${code}`))));
  });
  log(`built in ${Math.round((Date.now() - started) / 1000)} s`);
  return binaries;
}

/** GO when set, else `go` on PATH, else where the official archive installs it. */
function goBinary(): string {
  if (process.env.GO) return process.env.GO;
  const onPath = (process.env.PATH ?? '').split(':').some((dir) => dir && existsSync(join(dir, 'go')));
  return onPath || !existsSync('/usr/local/go/bin/go') ? 'go' : '/usr/local/go/bin/go';
}

export interface TemporalDatabase {
  host: string;
  port: number;
  user: string;
  password: string;
}

/**
 * The role `temporal` and its databases `temporal` and `temporal_visibility`, schemas brought up
 * to the binary's version by its sql tool (idempotent: a kept cluster is only updated). The role
 * owns only these databases, so the Temporal server cannot read the service's `rewards` data.
 */
export async function prepareTemporalDatabases(sqlTool: string, adminUrl: string, db: TemporalDatabase): Promise<void> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    // The password is new at each start (a kept cluster's role gets it too); it is written only
    // to the server's configuration file, readable by its owner alone.
    const password = `'${db.password.replace(/'/g, "''")}'`;
    const role = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [db.user]);
    await admin.query(`${role.rowCount ? 'ALTER' : 'CREATE'} ROLE ${db.user} LOGIN PASSWORD ${password}`);
    for (const name of ['temporal', 'temporal_visibility']) {
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!found.rowCount) await admin.query(`CREATE DATABASE ${name} OWNER ${db.user}`);
    }
  } finally {
    await admin.end();
  }
  const base = [
    '--plugin',
    'postgres12',
    '--ep',
    db.host,
    '--port',
    String(db.port),
    '--user',
    db.user,
    '--password',
    db.password,
  ];
  for (const [database, schema] of [
    ['temporal', SCHEMAS.temporal],
    ['temporal_visibility', SCHEMAS.visibility],
  ] as const) {
    // Version 0.0 creates the bookkeeping tables only; update-schema then applies every
    // versioned step up to the binary's own. A database that has them is updated only.
    if (!(await hasSchemaVersion(adminUrl, database))) {
      await run(sqlTool, [...base, '--db', database, 'setup-schema', '-v', '0.0']);
    }
    await run(sqlTool, [...base, '--db', database, 'update-schema', '--schema-name', schema]);
  }
}

async function hasSchemaVersion(adminUrl: string, database: string): Promise<boolean> {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const { rows } = await client.query<{ found: string | null }>(
      "SELECT to_regclass('public.schema_version') AS found",
    );
    return rows[0].found !== null;
  } finally {
    await client.end();
  }
}

export interface TemporalPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  metrics: number;
}

/** The server's configuration: every value spelled out here, nothing read from the module's samples. */
export function temporalServerConfig(
  db: TemporalDatabase,
  ports: TemporalPorts,
  logLevel: string,
): Record<string, unknown> {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${db.host}:${db.port}`,
      connectProtocol: 'tcp',
      user: db.user,
      password: db.password,
      // Each of the four services opens its own pools: 4 x (16 + 4) stay well inside the
      // embedded server's 200 connections beside the service's own pools.
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, httpPort?: number) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...(httpPort ? { httpPort } : {}) },
  });
  return {
    log: { stdout: true, level: logLevel },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: HISTORY_SHARDS,
      datastores: { default: store('temporal', 16), visibility: store('temporal_visibility', 4) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: { prometheus: { timerType: 'histogram', listenAddress: `127.0.0.1:${ports.metrics}` } },
    },
    services: {
      frontend: service(ports.frontend, ports.frontendMembership, ports.frontendHttp),
      history: service(ports.history, ports.historyMembership),
      matching: service(ports.matching, ports.matchingMembership),
      worker: service(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'rewards',
      currentClusterName: 'rewards',
      clusterInformation: {
        rewards: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${ports.frontend}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
  };
}

export interface TemporalServerHandle {
  address: string;
  metricsUrl: string;
  configFile: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function startTemporalServer(options: {
  server: string;
  configDir: string;
  db: TemporalDatabase;
  ports: TemporalPorts;
  namespace: string;
  /** Days a closed workflow stays visible, production's unless given; a new namespace only. */
  retentionDays?: number;
  log?: (line: string) => void;
  /** Told the server's process as soon as it is spawned (for the caller's clean-up). */
  onSpawn?: (child: ChildProcess) => void;
}): Promise<TemporalServerHandle> {
  mkdirSync(options.configDir, { recursive: true });
  const configFile = join(options.configDir, 'temporal-server.yaml');
  const header = `# Written by scripts/cluster/temporal-server.ts for Temporal server ${TEMPORAL_SERVER_VERSION}; rewritten at each start.\n`;
  writeFileSync(configFile, header + toYaml(temporalServerConfig(options.db, options.ports, 'warn')), { mode: 0o600 });
  // In a process group of its own: a Ctrl-C at the terminal reaches only the caller, which
  // stops the services that use the server before the server.
  const child = spawn(options.server, ['--config-file', configFile, '--allow-no-auth', 'start'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  options.onSpawn?.(child);
  const log = options.log ?? (() => undefined);
  child.stdout?.on('data', (d: Buffer) => log(d.toString()));
  child.stderr?.on('data', (d: Buffer) => log(d.toString()));
  const address = `127.0.0.1:${options.ports.frontend}`;
  const handle = {
    address,
    metricsUrl: `http://127.0.0.1:${options.ports.metrics}/metrics`,
    configFile,
    child,
    stop: () => stopChild(child, 20_000),
  };
  try {
    const connection = await waitUntilServing(child, address);
    try {
      await ensureNamespace(connection, options.namespace, options.retentionDays ?? CLOSED_WORKFLOW_RETENTION_DAYS);
      await registerSearchAttributes(connection, options.namespace);
      await waitForSearchAttributes(connection, options.namespace);
    } finally {
      await connection.close();
    }
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

// The server opens its frontend once membership has formed and the shards are owned; on a
// busy 2-core machine that takes seconds to a minute.
async function waitUntilServing(child: ChildProcess, address: string, timeoutMs = 120_000): Promise<Connection> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  child.once('error', (err) => (exited = `failed to start: ${err.message}`));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`Temporal server ${exited}`);
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      return connection;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`Temporal server not serving on ${address}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function ensureNamespace(connection: Connection, namespace: string, retentionDays: number): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(retentionDays * 86_400_000),
    });
  } catch (err) {
    if (!/already (exists|registered)/i.test((err as Error).message)) throw err;
  }
}

/**
 * Registration returns before every service has refreshed its namespace cache (every 2 s): a
 * workflow started with the attributes in between would be refused. So wait until a probe
 * workflow that carries all of them starts, then remove the probe.
 */
async function waitForSearchAttributes(connection: Connection, namespace: string, timeoutMs = 60_000): Promise<void> {
  const client = new Client({ connection, namespace });
  const deadline = Date.now() + timeoutMs;
  const searchAttributes = Object.fromEntries(
    Object.keys(SEARCH_ATTRIBUTE_DECLARATIONS).map((name) => [name, ['cluster-probe']]),
  );
  for (let attempt = 0; ; attempt++) {
    const workflowId = `cluster-probe/${Date.now()}-${attempt}`;
    try {
      const handle = await client.workflow.start('clusterProbe', {
        workflowId,
        taskQueue: 'cluster-probe',
        searchAttributes,
      });
      await handle.terminate('search attribute probe');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`search attributes not usable in ${namespace}: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
