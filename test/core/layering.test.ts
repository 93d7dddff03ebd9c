// The folders are the architecture (DESIGN.md, Layout), so the direction of imports between
// them is checked here: api/ (the HTTP side) and activities/ (the worker's effects) both stand
// on core/ (pure rules, and in core/domain/ the reads, writes and hand-over they share) and
// prisma/, and neither imports the other; core/ and prisma/ import neither. Type-only imports
// count too: a type borrowed from the other side is how the layers started to tangle.
// workflows/ has its own, stricter check (test/workflows/boundary.test.ts).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Layer → the layers it must never import from. */
const FORBIDDEN: Record<string, readonly string[]> = {
  api: ['activities', 'worker'],
  activities: ['api', 'worker'],
  core: ['api', 'activities', 'worker'],
  prisma: ['api', 'activities', 'worker', 'workflows'],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'generated'
        ? []
        : sources(join(dir, e.name))
      : e.name.endsWith('.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

/** The imports of `source` (a file at `file`, relative to the repository) that its layer forbids. */
export function layerViolations(file: string, source: string): string[] {
  const layer = file.split('/')[0];
  const forbidden = FORBIDDEN[layer] ?? [];
  const problems: string[] = [];
  for (const m of source.matchAll(
    /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)/gm,
  )) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (!spec.startsWith('.')) continue;
    const target = normalize(join(dirname(file), spec))
      .split(sep)
      .join('/');
    if (forbidden.includes(target.split('/')[0]))
      problems.push(`${file} imports ${target} (${layer}/ must not import ${target.split('/')[0]}/)`);
  }
  return problems;
}

describe('layers: which folder may import which', () => {
  it('recognises a forbidden import, type-only or not (the check itself works)', () => {
    assert.deepEqual(
      layerViolations('activities/sweeper.ts', "import type { EventKind } from '../api/ingestion/schemas';"),
      ['activities/sweeper.ts imports api/ingestion/schemas (activities/ must not import api/)'],
    );
    assert.equal(layerViolations('api/server.ts', "import { handOver } from '../activities/handover';").length, 1);
    assert.equal(layerViolations('core/domain/x.ts', "const m = await import('../../worker/main');").length, 1);
    assert.deepEqual(
      layerViolations('api/server.ts', "import { handOver } from './domain/handover';\nimport Koa from 'koa';"),
      [],
    );
  });

  it('holds in the tree', () => {
    const problems = Object.keys(FORBIDDEN).flatMap((layer) =>
      sources(join(ROOT, layer)).flatMap((path) =>
        layerViolations(relative(ROOT, path).split(sep).join('/'), readFileSync(path, 'utf8')),
      ),
    );
    assert.deepEqual(problems, []);
  });
});

/** Folders of api/ that are not areas: the middleware chain and the schema building blocks. */
const NOT_AREAS = new Set(['middleware', 'schemas']);

/** Other names seen for a job, and the one file name the job has. */
const JOB_FILES: Record<string, string> = {
  records: 'store.ts',
  repository: 'store.ts',
  presenter: 'present.ts',
  presenters: 'present.ts',
};

/**
 * One layout per area: each api/<area>/ names the same jobs the same way, so a reader finds
 * any behaviour by guessing the file name. Issuer routes in routes.ts, operator routes (and
 * only they) in admin-routes.ts, request and response schemas in schemas.ts, database reads
 * and writes in store.ts, rows into representations in present.ts. Any other module is named
 * for the one thing it answers (lineage.ts, consistency.ts), never as a variant of a job name.
 */
export function areaLayoutProblems(area: string, files: Record<string, string>): string[] {
  const problems: string[] = [];
  const names = Object.keys(files);
  if (!names.includes('routes.ts') && !names.includes('admin-routes.ts'))
    problems.push(`api/${area}/ has neither routes.ts nor admin-routes.ts`);
  for (const name of names) {
    const job = /(?:^|-)(routes|schemas|store|present|records|repository|presenters?)\.ts$/.exec(name)?.[1];
    const canonical = job && (JOB_FILES[job] ?? `${job}.ts`);
    if (canonical && name !== canonical && name !== 'admin-routes.ts')
      problems.push(`api/${area}/${name}: its job's file is ${canonical}`);
  }
  const operator = (source: string) => /auth:\s*'operator'|path:\s*'\/admin\//.test(source);
  for (const [name, source] of Object.entries(files)) {
    if (name === 'admin-routes.ts') {
      if (/auth:\s*'(issuer|public)'|path:\s*'\/(?!admin\/)/.test(source))
        problems.push(`api/${area}/admin-routes.ts declares a route that is not an operator's`);
    } else if (operator(source)) {
      problems.push(`api/${area}/${name} declares an operator route outside admin-routes.ts`);
    }
  }
  return problems;
}

describe('api/: one layout per area', () => {
  it('recognises a misnamed job file and a stray operator route (the check itself works)', () => {
    assert.deepEqual(areaLayoutProblems('x', { 'routes.ts': '', 'catalogue-store.ts': '', 'records.ts': '' }), [
      "api/x/catalogue-store.ts: its job's file is store.ts",
      "api/x/records.ts: its job's file is store.ts",
    ]);
    assert.equal(areaLayoutProblems('x', { 'lineage.ts': '' }).length, 1);
    assert.equal(areaLayoutProblems('x', { 'routes.ts': "auth: 'operator'," }).length, 1);
    assert.equal(areaLayoutProblems('x', { 'admin-routes.ts': "path: '/api/v2/x'," }).length, 1);
    assert.deepEqual(areaLayoutProblems('x', { 'admin-routes.ts': "path: '/admin/v1/x', auth: 'operator'" }), []);
  });

  it('holds in the tree', () => {
    const api = join(ROOT, 'api');
    const problems = readdirSync(api, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !NOT_AREAS.has(e.name))
      .flatMap((e) => {
        const dir = join(api, e.name);
        const files = Object.fromEntries(
          readdirSync(dir)
            .filter((f) => f.endsWith('.ts'))
            .map((f) => [f, readFileSync(join(dir, f), 'utf8')]),
        );
        return areaLayoutProblems(e.name, files);
      });
    assert.deepEqual(problems, []);
  });
});
