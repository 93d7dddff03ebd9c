// How the cluster runs the service's processes. The compiled build (`npm run build` to dist/,
// issue 14) is being added beside this; until it lands the cluster runs the TypeScript sources
// through tsx. Switching is this one constant (or CLUSTER_RUN_FROM=dist for one run).
// Node is spawned directly, never through npm: SIGKILL of the child must kill the service
// itself, not a wrapper that would leave it running.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

const RUN_FROM: 'source' | 'dist' = 'source';

export type ServiceProcess = 'api' | 'worker';

const ENTRIES: Record<ServiceProcess, { source: string; dist: string }> = {
  api: { source: 'api/server.ts', dist: 'dist/api/server.js' },
  worker: { source: 'worker/main.ts', dist: 'dist/worker/main.js' },
};

export function runFrom(env: NodeJS.ProcessEnv = process.env): 'source' | 'dist' {
  const chosen = env.CLUSTER_RUN_FROM ?? RUN_FROM;
  if (chosen !== 'source' && chosen !== 'dist') throw new Error(`CLUSTER_RUN_FROM must be source or dist (got "${chosen}")`);
  return chosen;
}

/** The executable and arguments of one service process. */
export function processCommand(kind: ServiceProcess, env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  const entry = ENTRIES[kind];
  if (runFrom(env) === 'dist') return { command: process.execPath, args: [join(ROOT, entry.dist)] };
  return { command: process.execPath, args: ['--import', 'tsx', join(ROOT, entry.source)] };
}

/** Builds dist/ first when the cluster runs the compiled build; nothing to do for the sources. */
export function buildService(log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): void {
  if (runFrom(env) !== 'dist') return;
  log('building the service (npm run build)');
  const result = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`npm run build failed with ${result.status ?? result.signal}`);
  for (const entry of Object.values(ENTRIES)) {
    if (!existsSync(join(ROOT, entry.dist))) throw new Error(`npm run build did not write ${entry.dist}`);
  }
}
