// The folders are the architecture (DESIGN.md, Layout), so the direction of imports between
// them is checked here: api/ (the HTTP side) and activities/ (the worker's effects) both stand
// on core/ (pure rules, and in core/domain/ the reads, writes and hand-over they share) and
// prisma/, and neither imports the other; core/ and prisma/ import neither. Type-only imports
// count too: a type borrowed from the other side is how the layers started to tangle.
// Of workflows/, api/, core/ and activities/ import only the contracts: a workflow's name, id,
// input and signals live in a file of their own, so that starting or signalling a run never
// loads the workflow's code (its activity proxies, their options, its patches).
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

/** The layers that may import a workflow's contract but never its implementation. */
const CONTRACT_ONLY = ['api', 'core', 'activities'];

/**
 * The contract modules of workflows/: each workflow's `<workflow>-contract.ts`, the lifecycle's
 * (`lifecycle-signals.ts`, the name the recorded fixtures and the decision records use) and the
 * search attributes every workflow sets. worker/ bundles the workflows, so it may import the rest.
 */
export function isWorkflowContract(target: string): boolean {
  return /^workflows\/(?:[a-z0-9-]+-contract|lifecycle-signals|search-attributes)$/.test(target);
}

/** Values a contract may take from each package: definitions of names, nothing that runs. */
const CONTRACT_VALUES: Record<string, (name: string) => boolean> = {
  '@temporalio/workflow': (name) => /^define[A-Z]/.test(name),
  '@temporalio/common': (name) => name === 'defineSearchAttributeKey' || name === 'SearchAttributeType',
};

/**
 * The imports of a contract module (at `file`, relative to the repository) beyond what one may
 * hold: @temporalio/workflow's define* functions (and @temporalio/common's search attribute
 * keys), types from core/ and the Temporal packages, and other contracts. So a layer importing a
 * contract reaches no workflow code, activity or effect through it.
 */
export function contractImportProblems(file: string, source: string): string[] {
  const problems: string[] = [];
  if (/\brequire\(|\bimport\(/.test(source)) problems.push(`${file} loads a module at run time`);
  for (const m of source.matchAll(/^\s*(?:import|export)\s+(type\s+)?([^'"]*?)\s*from\s+['"]([^'"]+)['"]/gm)) {
    const [, typeOnly, clause, spec] = m;
    const target = spec.startsWith('.')
      ? normalize(join(dirname(file), spec))
          .split(sep)
          .join('/')
      : spec;
    if (spec.startsWith('.') && isWorkflowContract(target)) continue;
    const braces = /^\{([^}]*)\}$/.exec(clause.trim());
    const values = typeOnly
      ? []
      : braces
        ? braces[1]
            .split(',')
            .map((item) => item.trim())
            .filter((item) => item !== '' && !item.startsWith('type '))
            .map((item) => item.split(/\s+as\s+/)[0])
        : [clause.trim()];
    const typesFrom = target.startsWith('core/') || target.startsWith('@temporalio/');
    const allowed = CONTRACT_VALUES[target];
    const bad = values.filter((name) => !allowed?.(name));
    if (bad.length > 0 || (!typesFrom && !allowed))
      problems.push(`${file} imports ${bad.length > 0 ? `${bad.join(', ')} from ` : ''}${target}`);
  }
  return problems;
}

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
    else if (CONTRACT_ONLY.includes(layer) && target.split('/')[0] === 'workflows' && !isWorkflowContract(target))
      problems.push(`${file} imports ${target} (${layer}/ imports a workflow's contract, never its implementation)`);
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

  it("recognises an import of a workflow's implementation, type-only or not, where only its contract may go", () => {
    assert.deepEqual(
      layerViolations('core/domain/x.ts', "import type { PayoutRunInput } from '../../workflows/payout-run';"),
      ["core/domain/x.ts imports workflows/payout-run (core/ imports a workflow's contract, never its implementation)"],
    );
    assert.equal(layerViolations('api/server.ts', "import { payoutRun } from '../workflows';").length, 1);
    assert.equal(
      layerViolations('activities/sweeper.ts', "import { x } from '../workflows/activity-options';").length,
      1,
    );
    assert.deepEqual(
      layerViolations(
        'api/server.ts',
        [
          "import { payoutWorkflowId } from '../workflows/payout-run-contract';",
          "import { reprocessSignal } from '../workflows/lifecycle-signals';",
          "import { RewardsStatus } from '../workflows/search-attributes';",
        ].join('\n'),
      ),
      [],
    );
    // worker/ bundles the workflows.
    assert.deepEqual(
      layerViolations('worker/workflow-spans.ts', "import type { S } from '../workflows/tracing-interceptors';"),
      [],
    );
  });

  it('recognises a contract that imports more than definitions and types (the check itself works)', () => {
    const file = 'workflows/claim-resolution-contract.ts';
    assert.deepEqual(
      contractImportProblems(
        file,
        [
          "import { defineSignal, defineUpdate as update, type Sinks } from '@temporalio/workflow';",
          "import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';",
          "import type { ClaimOutcome } from '../core/rules/claims';",
          "import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS } from './webhook-delivery-contract';",
        ].join('\n'),
      ),
      [],
    );
    assert.deepEqual(
      contractImportProblems(
        file,
        [
          "import { proxyActivities, defineQuery } from '@temporalio/workflow';",
          "import { postingOptions } from './activity-options';",
          "import type { ClaimActivities } from '../activities/claims';",
          "import { newId } from '../core/ids';",
        ].join('\n'),
      ),
      [
        'workflows/claim-resolution-contract.ts imports proxyActivities from @temporalio/workflow',
        'workflows/claim-resolution-contract.ts imports postingOptions from workflows/activity-options',
        'workflows/claim-resolution-contract.ts imports activities/claims',
        'workflows/claim-resolution-contract.ts imports newId from core/ids',
      ],
    );
  });

  it('holds for every contract module of workflows/', () => {
    const contracts = sources(join(ROOT, 'workflows'))
      .map((path) => relative(ROOT, path).split(sep).join('/'))
      .filter((file) => isWorkflowContract(file.replace(/\.ts$/, '')));
    assert.ok(contracts.length >= 7, `only ${contracts.length} contract modules found`);
    assert.deepEqual(
      contracts.flatMap((file) => contractImportProblems(file, readFileSync(join(ROOT, file), 'utf8'))),
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
