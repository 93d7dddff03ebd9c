// Every webhook type has a writer: a step that records it (`type: '<type>'` in the code that
// writes webhook records), so that a type declared, documented and allowed by its CHECK cannot be
// one nobody ever sends. The other places a type lives are checked by the compiler (Records keyed
// by the type), test/prisma/kinds-in-checks.test.ts and test/docs/lists.test.ts (CONTRIBUTING.md,
// "Add a webhook type").
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { WEBHOOK_TYPES } from '../../../core/webhooks/payloads';

const ROOT = join(__dirname, '..', '..', '..');
/** Where webhook records are written: the steps, the shared domain code and the API's own postings. */
const WRITERS = ['activities', 'core/domain', 'api'];
/** Where a type is only described: its example and the schemas of the routes that name types. */
const NOT_WRITERS = ['api/openapi-webhooks.ts', 'api/webhooks/schemas.ts', 'api/webhook-endpoints/schemas.ts'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The types no writer names. */
export function unwritten(types: readonly string[], files: Array<{ path: string; text: string }>): string[] {
  return types.filter((type) => !files.some((f) => f.text.includes(`type: '${type}'`)));
}

describe('webhook types and their writers', () => {
  it('finds a writer for every webhook type', () => {
    const files = WRITERS.flatMap((dir) => sources(join(ROOT, dir)))
      .filter((path) => !NOT_WRITERS.includes(relative(ROOT, path)))
      .map((path) => ({ path, text: readFileSync(path, 'utf8') }));
    assert.deepEqual(unwritten(WEBHOOK_TYPES, files), []);
  });

  it('names a type nobody writes (the check can fail)', () => {
    const files = [{ path: 'a.ts', text: "recordWebhook(tx, { type: 'written', data })" }];
    assert.deepEqual(unwritten(['written', 'declared_only'], files), ['declared_only']);
  });
});
