// The environment a test runs `npm start` (scripts/start.ts) with: its own data folder and
// free ports, embedded PostgreSQL and the Temporal dev server whatever the caller's
// environment says, one API process, and metrics ports off.
import type { ChildProcess } from 'node:child_process';
import { freePort } from './ports';

export interface DevStackPorts {
  api: number;
  pg: number;
  temporal: number;
  ui: number;
}

export async function freeDevStackPorts(): Promise<DevStackPorts> {
  return { api: await freePort(), pg: await freePort(), temporal: await freePort(), ui: await freePort() };
}

export function devStackTestEnv(dataDir: string, ports: DevStackPorts): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(ports.api),
    HOST: '127.0.0.1',
    EMBEDDED_PG_PORT: String(ports.pg),
    TEMPORAL_DEV_PORT: String(ports.temporal),
    TEMPORAL_UI_PORT: String(ports.ui),
    WORKER_METRICS_PORT: '0',
    TEMPORAL_METRICS_PORT: '0',
    API_PROCESSES: '1',
    LOG_LEVEL: 'info',
    DATABASE_URL: '',
    TEMPORAL_ADDRESS: '',
  };
}

/**
 * Stops an `npm start` the test spawned in a process group of its own, if it still runs: in order
 * (SIGINT to the group, as Ctrl-C does), since its Temporal and PostgreSQL run in groups of their
 * own, which a SIGKILL of the supervisor would leave behind; SIGKILL only after a minute.
 */
export async function stopDevStack(stack: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (stack.exitCode !== null) return;
  process.kill(-stack.pid!, 'SIGINT');
  const stopped = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 60_000))]);
  if (!stopped) process.kill(-stack.pid!, 'SIGKILL');
}
