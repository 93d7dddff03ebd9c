// GET /docs: the API reference, rendered in the browser from /openapi.json by Swagger UI, which
// the API serves itself (api/docs/assets.ts). Unauthenticated, like /openapi.json.
import { defineRoute, type RouteSpec } from '../route';
import { docsAssets } from './assets';
import { DOCS_CSP, docsPage } from './page';
import { serveHtmlPage } from '../html-page';

export function docsRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/docs',
      operationId: 'docs',
      summary: 'This API reference, as a page to read and try requests from',
      description:
        'Swagger UI over /openapi.json, served by this API (no CDN: it works offline). Authorize with a token to try requests.',
      tag: 'Health',
      auth: 'none',
      responses: { 200: { description: 'An HTML page.', mediaType: 'text/html' } },
      async handle(ctx) {
        const assets = docsAssets();
        serveHtmlPage(
          ctx,
          DOCS_CSP,
          docsPage(
            {
              css: assets.url('swagger-ui.css'),
              bundle: assets.url('swagger-ui-bundle.js'),
              script: assets.url('docs.js'),
              icon: assets.url('favicon-32x32.png'),
            },
            'Issuer Rewards Service: API reference',
          ),
        );
      },
    }),
  ];
}
