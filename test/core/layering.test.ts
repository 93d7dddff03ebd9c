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
