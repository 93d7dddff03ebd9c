// GET /console: the operator console (API.md, "Operators with names", "Console"), a page over the
// operator API served by the API process. Unauthenticated like /docs: the page holds nothing;
// the operator's token, typed in, is what every call it makes carries.
import { defineRoute, type RouteSpec } from '../route';
import { consoleAssets } from './assets';
import { CONSOLE_CSP, consolePage } from './page';
import { serveHtmlPage } from '../html-page';

export function consoleRoutes(): RouteSpec[] {
  return [
    defineRoute({
      method: 'get',
      path: '/console',
      operationId: 'console',
      summary: 'The operator console: claims, approvals, statements, offers and the audit log in a browser',
      description:
        "Sign in with an operator token (kept in the tab's session storage, sent as a header). It shows what the " +
        "operator's roles allow and each answer the API gives; every action is an operator API call.",
      tag: 'Health',
      auth: 'none',
      responses: { 200: { description: 'An HTML page.', mediaType: 'text/html' } },
      async handle(ctx) {
        const assets = consoleAssets();
        const page = consolePage({
          script: assets.url('console.js'),
          css: assets.url('console.css'),
          icon: assets.url('icon.svg'),
        });
        serveHtmlPage(ctx, CONSOLE_CSP, page, { 'X-Frame-Options': 'DENY' });
      },
    }),
  ];
}
