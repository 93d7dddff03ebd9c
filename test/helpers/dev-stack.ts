// The environment a test runs `npm start` (scripts/start.ts) with: its own data folder and
// free ports, embedded PostgreSQL and the Temporal dev server whatever the caller's
// environment says, one API process, and metrics ports off.
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
