// The files of the API reference page (/docs): Swagger UI from the swagger-ui-dist package (a
// runtime dependency, so a production install has it) and the few lines that start it. The
// API serves them itself, so the page needs no CDN and works on a machine without internet.
//
// Their URLs carry a hash of every file (/docs/assets/<build>/<name>): a new swagger-ui-dist or
// a change of ours makes new URLs, so browsers may keep a file for a year without asking again,
// while the page itself is revalidated on every visit.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../../core/errors';
import { DOCS_SCRIPT } from './page';

interface Asset {
  body: Buffer;
  /** Compressed once at load; the bundle shrinks from about 1.5 MB to 0.4 MB. */
  gzipped?: Buffer;
  contentType: string;
}

export interface DocsAssets {
  build: string;
  files: ReadonlyMap<string, Asset>;
  url(name: string): string;
}

const SWAGGER_UI_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const ASSET_PREFIX = '/docs/assets';
export const IMMUTABLE = 'public, max-age=31536000, immutable';

let loaded: DocsAssets | undefined;

/** Read on first use: an API process that never serves /docs never reads 1.5 MB of JavaScript. */
export function docsAssets(): DocsAssets {
  loaded ??= load();
  return loaded;
}

function load(): DocsAssets {
  const dir = dirname(require.resolve('swagger-ui-dist/package.json'));
  const files = new Map<string, Asset>();
  for (const [name, contentType] of Object.entries(SWAGGER_UI_FILES))
    files.set(name, asset(readFileSync(join(dir, name)), contentType));
  files.set('docs.js', asset(Buffer.from(DOCS_SCRIPT), 'text/javascript; charset=utf-8'));
  const hash = createHash('sha256');
  for (const [name, file] of files) hash.update(name).update(file.body);
  const build = hash.digest('hex').slice(0, 16);
  return { build, files, url: (name) => `${ASSET_PREFIX}/${build}/${name}` };
}

function asset(body: Buffer, contentType: string): Asset {
  const compressible = contentType.startsWith('text/');
  return { body, contentType, ...(compressible ? { gzipped: gzipSync(body, { level: 9 }) } : {}) };
}

/**
 * GET (and HEAD) /docs/assets/<build>/<name>. Not in /openapi.json: these are the page's
 * files, not part of the API a client is generated for. A stale build is a 404, never another
 * file under a URL cached for a year.
 */
export function mountDocsAssets(router: Router): void {
  router.get('docsAsset', `${ASSET_PREFIX}/:build/:name`, (ctx: Context) => {
    const assets = docsAssets();
    const { build, name } = (ctx as Context & { params: Record<string, string> }).params;
    const file = build === assets.build ? assets.files.get(name) : undefined;
    if (!file) throw errors.notFound('asset_not_found', 'No such file of the API reference page; reload /docs.');
    ctx.set('Cache-Control', IMMUTABLE);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.vary('Accept-Encoding');
    ctx.type = file.contentType;
    if (file.gzipped && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = file.gzipped;
    } else {
      ctx.body = file.body;
    }
  });
}
