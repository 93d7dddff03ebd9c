// Where the worker's workflow code comes from: the bundle `npm run build` writes, beside the
// compiled worker; from the TypeScript sources, workflows/ bundled at start.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKFLOW_BUNDLE_FILE, WORKFLOWS_PATH, workflowSource } from '../../worker/workflow-source';

describe('worker/workflow-source', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'rewards-workflow-source-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('loads the prebuilt bundle when it is there', () => {
    writeFileSync(join(dir, WORKFLOW_BUNDLE_FILE), '// bundle');
    assert.deepEqual(workflowSource(dir, true), { workflowBundle: { codePath: join(dir, WORKFLOW_BUNDLE_FILE) } });
  });

  it('refuses to start compiled without the bundle, naming the build', () => {
    assert.throws(() => workflowSource(dir, true), /workflow-bundle\.js is missing: .*npm run build/);
  });

  it('bundles workflows/ at start from the TypeScript sources', () => {
    assert.deepEqual(workflowSource(dir, false), { workflowsPath: WORKFLOWS_PATH });
    assert.match(WORKFLOWS_PATH, /workflows[/\\]index\.ts$/);
  });
});
