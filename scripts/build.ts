// `npm run build`: the production build, in dist/ (docs/operating/deploy.md). Needs the dev
// dependencies (the Prisma CLI, TypeScript, the swc compiler the workflow bundler uses); what it
// writes runs on a production install (`npm ci --omit=dev --omit=optional`) with none of them.
// 1. the Prisma client, generated offline into prisma/generated (as `npm start` does);
// 2. tsc -p tsconfig.build.json: JavaScript laid out like the sources, with source maps;
// 3. the files the compiled code reads beside it: the SQL migrations, the sandbox catalogue;
// 4. the workflow bundle the compiled worker loads (worker/workflow-source.ts), made from the
//    compiled workflows/ so it is exactly the code that was just built.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { listMigrations, MIGRATIONS_DIR } from '../prisma/migrate';
import { TRACED_WORKFLOW_BUNDLE_FILE, WORKFLOW_BUNDLE_FILE } from '../worker/workflow-source';

const ROOT = resolve(__dirname, '..');
const DIST = join(ROOT, 'dist');
/** The processes `npm run migrate`, `start:api`, `start:worker` and the admin CLI run. */
const ENTRY_POINTS = ['prisma/migrate-cli.js', 'api/server.js', 'worker/main.js', 'scripts/admin.js'];
/** Read at run time relative to the compiled file that reads them (prisma/migrate.ts, api/catalogue/import.ts). */
const ASSETS = ['prisma/migrations', 'scripts/catalogue', 'api/console/static'];

const { ensurePrismaClient } = require('./bootstrap.js') as { ensurePrismaClient(): void };

function step(name: string, run: () => void): void {
  const started = Date.now();
  run();
  console.log(`[build] ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

async function main(): Promise<void> {
  step('Prisma client generated', ensurePrismaClient);
  step('dist/ emptied', () => rmSync(DIST, { recursive: true, force: true }));
  step('compiled (tsconfig.build.json)', () => {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')],
      { cwd: ROOT, stdio: 'inherit' },
    );
  });
  step(`copied ${ASSETS.join(', ')}`, () => {
    for (const asset of ASSETS) cpSync(join(ROOT, asset), join(DIST, asset), { recursive: true });
  });
  // Two bundles: the plain one, and one with the tracing interceptors for a worker started with
  // OTEL_* (worker/tracing.ts), so a worker that does not trace runs none of their code.
  await writeBundle(WORKFLOW_BUNDLE_FILE, []);
  // The compiled twin of worker/tracing.ts's WORKFLOW_TRACING_MODULE.
  await writeBundle(TRACED_WORKFLOW_BUNDLE_FILE, [join(DIST, 'workflows', 'tracing-interceptors.js')]);
  check();
}

/** What the compiled processes need is there: a build that would fail at start fails here. */
function check(): void {
  const missing = ENTRY_POINTS.map((entry) => join(DIST, entry)).filter((file) => !existsSync(file));
  if (missing.length > 0)
    throw new Error(`the build did not write ${missing.map((f) => relative(ROOT, f)).join(', ')}`);
  const source = listMigrations(MIGRATIONS_DIR).map((m) => `${m.name}:${m.checksum}`);
  const built = listMigrations(join(DIST, 'prisma', 'migrations')).map((m) => `${m.name}:${m.checksum}`);
  if (source.join() !== built.join()) throw new Error('dist/prisma/migrations differs from prisma/migrations');
  console.log(`[build] dist/ ready: ${ENTRY_POINTS.join(', ')}; ${built.length} migrations`);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.stack : err);
  process.exit(1);
});

async function writeBundle(file: string, workflowInterceptorModules: string[]): Promise<void> {
  const started = Date.now();
  const { code } = await bundleWorkflowCode({
    workflowsPath: join(DIST, 'workflows', 'index.js'),
    workflowInterceptorModules,
  });
  const bundle = join(DIST, 'worker', file);
  // A module compiled to the same name would be replaced by the bundle and break the worker.
  if (existsSync(bundle))
    throw new Error(`${relative(ROOT, bundle)} is a compiled module: the bundle needs a name of its own`);
  writeFileSync(bundle, code);
  console.log(
    `[build] workflow bundle ${relative(ROOT, bundle)}, ${Math.round(statSync(bundle).size / 1024)} KiB (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
}
