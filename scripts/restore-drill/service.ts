// The service of the restore drill: the API and the worker as separate Node processes (as
// production and `npm start` run them) over a given database and Temporal server, their output in
// a log file that the drill shows when something fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { childReady } from '../../bench/stack';
import { stopChild } from '../lib/temporal-dev-server';

const ROOT = resolve(__dirname, '..', '..');

export interface ServiceSettings {
  databaseUrl: string;
  temporalAddress: string;
  operatorToken: string;
  /** WEBHOOK_SECRET_KEYS: a restored database's endpoints are sealed under the source's keys. */
  webhookSecretKeys: string;
  port: number;
  logFile: string;
}

export interface Service {
  apiUrl: string;
  worker: ChildProcess;
  stop(): Promise<void>;
  /** The last lines the processes wrote, for a failure report. */
  tail(lines: number): string;
}

/** The environment of the service's processes and of the admin CLI run beside them. */
export function serviceEnv(s: Omit<ServiceSettings, 'logFile'>): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: s.databaseUrl,
    TEMPORAL_ADDRESS: s.temporalAddress,
    OPERATOR_TOKEN: s.operatorToken,
    WEBHOOK_SECRET_KEYS: s.webhookSecretKeys,
    PORT: String(s.port),
    HOST: '127.0.0.1',
    API_PROCESSES: '1',
    LOG_LEVEL: 'warn',
    // The drill's webhook receiver listens on loopback.
    WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
    SHUTDOWN_DRAIN_DELAY: '0s',
    WORKER_METRICS_PORT: '0',
    TEMPORAL_METRICS_PORT: '0',
  };
}

export async function startService(settings: ServiceSettings): Promise<Service> {
  const out = openSync(settings.logFile, 'a');
  const env = serviceEnv(settings);
  const node = (entry: string) =>
    spawn(process.execPath, ['--import', 'tsx', join(ROOT, entry)], {
      cwd: ROOT,
      env,
      stdio: ['ignore', out, out, 'ipc'],
    });
  const api = node('api/server.ts');
  const worker = node('worker/main.ts');
  const apiUrl = `http://127.0.0.1:${settings.port}`;
  const service: Service = {
    apiUrl,
    worker,
    async stop() {
      // A paused worker would not act on SIGTERM.
      if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGCONT');
      await Promise.all([stopChild(api, 20_000), stopChild(worker, 45_000)]);
      closeSync(out);
    },
    tail: (lines) => readFileSync(settings.logFile, 'utf8').split('\n').slice(-lines).join('\n'),
  };
  try {
    await Promise.all([apiReady(apiUrl, api), childReady(worker)]);
  } catch (err) {
    await service.stop();
    throw new Error(`the service did not start (${String(err)}):\n${service.tail(30)}`);
  }
  return service;
}

/** /readyz answers 200 once the API reaches PostgreSQL and Temporal; bounded at 90 s. */
async function apiReady(apiUrl: string, api: ChildProcess): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (api.exitCode !== null) throw new Error(`the API exited with ${api.exitCode}`);
    const ok = await fetch(`${apiUrl}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the API at ${apiUrl} was not ready within 90 s`);
}
