// The console's script and stylesheet (api/console/static/), served by the API itself under URLs
// that carry a hash of their contents (/console/assets/<build>/<name>), like the reference page's
// files (api/docs/assets.ts): cached for a year, replaced by a new URL when they change.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../../core/errors';
import { IMMUTABLE } from '../docs/assets';

const FILES: Record<string, string> = {
  'console.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  // The browser asks for an icon whatever the page says; one of ours keeps that a 200.
  'icon.svg': 'image/svg+xml',
};
const PREFIX = '/console/assets';

export interface ConsoleAssets {
  build: string;
  files: ReadonlyMap<string, { body: Buffer; contentType: string }>;
  url(name: string): string;
}

let loaded: ConsoleAssets | undefined;

/** Read on first use; `npm run build` copies api/console/static beside the compiled code. */
export function consoleAssets(): ConsoleAssets {
  loaded ??= load();
  return loaded;
}

function load(): ConsoleAssets {
  const files = new Map<string, { body: Buffer; contentType: string }>();
  for (const [name, contentType] of Object.entries(FILES))
    files.set(name, { body: readFileSync(join(__dirname, 'static', name)), contentType });
  const hash = createHash('sha256');
  for (const [name, file] of files) hash.update(name).update(file.body);
  const build = hash.digest('hex').slice(0, 16);
  return { build, files, url: (name) => `${PREFIX}/${build}/${name}` };
}

/** GET /console/assets/<build>/<name>: the page's files, not in /openapi.json (like /docs's). */
export function mountConsoleAssets(router: Router): void {
  router.get('consoleAsset', `${PREFIX}/:build/:name`, (ctx: Context) => {
    const assets = consoleAssets();
    const { build, name } = (ctx as Context & { params: Record<string, string> }).params;
    const file = build === assets.build ? assets.files.get(name) : undefined;
    if (!file) throw errors.notFound('asset_not_found', 'No such file of the console; reload /console.');
    ctx.set('Cache-Control', IMMUTABLE);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = file.contentType;
    ctx.body = file.body;
  });
}
