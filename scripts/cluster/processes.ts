// How the cluster runs the service's processes: the compiled build by default, as production
// does (`npm run build` to dist/, then what `npm run start:api` and `start:worker` run), or the
// TypeScript sources through tsx (CLUSTER_RUN_FROM=source: no build, edits picked up at once).
// Node is spawned directly, never through npm: SIGKILL of the child must kill the service
// itself, not a wrapper that would leave it running.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

const RUN_FROM: 'source' | 'dist' = 'dist';

export type ServiceProcess = 'api' | 'worker';

const ENTRIES: Record<ServiceProcess, { source: string; dist: string }> = {
  api: { source: 'api/server.ts', dist: 'dist/api/server.js' },
  worker: { source: 'worker/main.ts', dist: 'dist/worker/main.js' },
};

export function runFrom(env: NodeJS.ProcessEnv = process.env): 'source' | 'dist' {
  const chosen = env.CLUSTER_RUN_FROM ?? RUN_FROM;
  if (chosen !== 'source' && chosen !== 'dist')
    throw new Error(`CLUSTER_RUN_FROM must be source or dist (got "${chosen}")`);
  return chosen;
}

/** The executable and arguments of one service process. */
export function processCommand(
  kind: ServiceProcess,
  env: NodeJS.ProcessEnv = process.env,
): { command: string; args: string[] } {
  const entry = ENTRIES[kind];
  // The flags of package.json's start:api and start:worker.
  if (runFrom(env) === 'dist')
    return { command: process.execPath, args: ['--enable-source-maps', join(ROOT, entry.dist)] };
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
