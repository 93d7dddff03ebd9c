// Workflow code must stay deterministic: files in workflows/ import only
// @temporalio/workflow, @temporalio/common (deterministic, bundled with the workflow),
// type-only imports, each other, and the few core/ modules named in SHARED_WITH_WORKFLOWS:
// leaves of constants and types that activities import too (STYLE.md, habit 1).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const WORKFLOWS = join(__dirname, '..', '..', 'workflows');

/**
 * core/ modules workflow code may import, as written in workflows/ files. Each must itself
 * import nothing at all (checked below), so allowing one never lets effects in by a detour.
 */
const SHARED_WITH_WORKFLOWS = ['../core/failure-types'];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

export function forbiddenImports(source: string): string[] {
  const problems: string[] = [];
  for (const m of source.matchAll(
    /^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)/gm,
  )) {
    const typeOnly = Boolean(m[2]);
    const spec = m[3] ?? m[4];
    if (typeOnly) continue;
    if (
      spec === '@temporalio/workflow' ||
      spec === '@temporalio/common' ||
      spec.startsWith('./') ||
      spec.startsWith('../workflows/')
    )
      continue;
    if (SHARED_WITH_WORKFLOWS.includes(spec)) continue;
    problems.push(spec);
  }
  return problems;
}

/**
 * Calls that read the clock, randomness or real timers outside Temporal's sandbox replacements.
 * The workflow sandbox stubs Date.now and Math.random deterministically, but code meant to stay
 * deterministic should use the workflow clock on purpose (Date.now() in workflow code is the
 * workflow time, so it is allowed only where a comment says so: `// workflow time`).
 */
function nondeterministicCalls(text: string): string[] {
  const code = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('//') && !line.includes('// workflow time'))
    .join('\n');
  return [...code.matchAll(/\b(Date\.now\(|Math\.random\(|setTimeout\()/g)].map((m) => m[1]);
}

describe('workflows/ import boundary', () => {
  it('recognises a nondeterministic call (the check itself works)', () => {
    assert.deepEqual(
      nondeterministicCalls(
        `const id = Math.random();\nconst t = Date.now();\nsetTimeout(f, 1);\nimport { sleep } from '@temporalio/workflow';`,
      ),
      ['Math.random(', 'Date.now(', 'setTimeout('],
    );
    assert.deepEqual(nondeterministicCalls(`// Date.now() in a comment is fine\nconst d = new Date(input.atMs);`), []);
  });

  it('recognises a forbidden import (the check itself works)', () => {
    assert.deepEqual(
      forbiddenImports(
        `import { readFileSync } from 'node:fs';\nimport type { Db } from '../prisma/client';\nimport { x } from './x';`,
      ),
      ['node:fs'],
    );
    assert.deepEqual(forbiddenImports(`const pg = require('pg');`), ['pg']);
    assert.deepEqual(
      forbiddenImports(`import { EVENT_NOT_FOUND } from '../core/failure-types';\nimport { x } from '../core/ledger';`),
      ['../core/ledger'],
    );
  });

  it('allows only core/ modules that import nothing themselves', () => {
    for (const spec of SHARED_WITH_WORKFLOWS) {
      const text = readFileSync(join(WORKFLOWS, `${spec}.ts`), 'utf8');
      assert.doesNotMatch(text, /^\s*(import|export)\b[^;]*\bfrom\s+['"]|require\(/m, `${spec} must stay a leaf`);
      assert.deepEqual(nondeterministicCalls(text), [], `${spec} uses a nondeterministic API`);
    }
  });

  it('finds only allowed imports in every workflow file', () => {
    for (const file of sources(WORKFLOWS)) {
      const text = readFileSync(file, 'utf8');
      assert.deepEqual(forbiddenImports(text), [], `${file} imports something with effects`);
      assert.deepEqual(nondeterministicCalls(text), [], `${file} uses a nondeterministic API`);
    }
  });
});
