// Where the worker's workflow code comes from. `npm run build` bundles workflows/ once into
// dist/worker/workflow-bundle.js (scripts/build.ts), and the compiled worker loads that file:
// no webpack run at start (seconds of CPU and a few hundred MB per process), no compiler in the
// production install, and every worker of a release runs byte-identical workflow code. From the
// TypeScript sources (npm start, tests, bench) the worker bundles workflows/ itself at start,
// so an edit is picked up by the next start.
import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';

export const WORKFLOW_BUNDLE_FILE = 'workflow-bundle.js';
/** The same workflows with OpenTelemetry's workflow interceptors, for a worker that traces (worker/tracing.ts). */
export const TRACED_WORKFLOW_BUNDLE_FILE = 'workflow-bundle-traced.js';
export const WORKFLOWS_PATH = require.resolve('../workflows');

export type WorkflowSource = { workflowBundle: { codePath: string } } | { workflowsPath: string };

/**
 * `compiled`: this module runs as built JavaScript (dist/), where the bundle must be beside it.
 * `traced`: the bundle with the tracing interceptors; from sources, Worker.create bundles them
 * in itself from the interceptors' workflowModules.
 */
export function workflowSource(
  dir = __dirname,
  compiled = extname(__filename) === '.js',
  traced = false,
): WorkflowSource {
  const codePath = join(dir, traced ? TRACED_WORKFLOW_BUNDLE_FILE : WORKFLOW_BUNDLE_FILE);
  if (existsSync(codePath)) return { workflowBundle: { codePath } };
  if (compiled) {
    // Bundling here would need the swc compiler, which a lean production install leaves out.
    throw new Error(
      `${codePath} is missing: the compiled worker runs the workflow bundle that \`npm run build\` writes`,
    );
  }
  return { workflowsPath: WORKFLOWS_PATH };
}
