// The document a deployment with the default configuration serves at /openapi.json, as
// committed at the root of the repository (openapi.json) for readers and client generators
// that never run the service. `npm run openapi` (scripts/openapi.ts) writes it;
// test/api/openapi-published.test.ts fails when the committed file and the server disagree.
import { join } from 'node:path';
import { allRoutes, API_VERSION } from './app';
import type { AppDeps } from './deps';
import { buildOpenApi } from './openapi';
import { loadConfig } from '../core/config';

export const OPENAPI_FILE = join(__dirname, '..', 'openapi.json');

/** Rendered from the route declarations with the defaults of core/config.ts (no environment read). */
export function defaultOpenApi(): object {
  const config = loadConfig({});
  // Declarations need their deps only to handle requests; listing them needs none.
  return buildOpenApi(allRoutes({} as AppDeps), API_VERSION, {
    webhookRetryScheduleMs: config.webhookRetryScheduleMs,
    rateLimits: config.rateLimits,
  });
}

/** The file's text: two-space JSON and a final newline, so diffs stay readable. */
export function serializeOpenApi(doc: object): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
