// Workflow code must stay deterministic: files in workflows/ import only
// @temporalio/workflow, @temporalio/common (deterministic, bundled with the workflow),
// type-only imports, and each other (STYLE.md, habit 1).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const WORKFLOWS = join(__dirname, '..', '..', 'workflows');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

export function forbiddenImports(source: string): string[] {
  const problems: string[] = [];
  for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
    const typeOnly = Boolean(m[2]);
    const spec = m[3] ?? m[4];
    if (typeOnly) continue;
    if (spec === '@temporalio/workflow' || spec === '@temporalio/common' || spec.startsWith('./') || spec.startsWith('../workflows/')) continue;
    problems.push(spec);
  }
  return problems;
}

describe('workflows/ import boundary', () => {
  it('recognises a forbidden import (the check itself works)', () => {
    assert.deepEqual(forbiddenImports(`import { readFileSync } from 'node:fs';\nimport type { Db } from '../prisma/client';\nimport { x } from './x';`), ['node:fs']);
    assert.deepEqual(forbiddenImports(`const pg = require('pg');`), ['pg']);
  });

  it('finds only allowed imports in every workflow file', () => {
    for (const file of sources(WORKFLOWS)) {
      const text = readFileSync(file, 'utf8');
      assert.deepEqual(forbiddenImports(text), [], `${file} imports something with effects`);
      assert.ok(!/\bDate\.now\(|Math\.random\(|setTimeout\(/.test(text) || text.includes('@temporalio/workflow'), `${file} uses a nondeterministic API`);
    }
  });
});
