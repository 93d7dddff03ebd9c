// The HTML of /docs and the script that starts Swagger UI on it. The script is a file of its
// own (docs.js among the assets), not inline, so the page's Content-Security-Policy can refuse
// every inline script and every origin but this one.

/** Starts Swagger UI on /openapi.json. Runs in the browser: plain ES2015, no imports. */
export const DOCS_SCRIPT = `'use strict';
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    // Never send the document to validator.swagger.io (Swagger UI's default): the page stays offline.
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayOperationId: true,
    displayRequestDuration: true,
    persistAuthorization: false,
  });
});
`;

/**
 * The page's policy: scripts, styles, images and API calls ("Try it out") from this origin only.
 * Swagger UI sets style attributes (hence 'unsafe-inline' for styles, never for scripts) and
 * draws a few icons as data: URLs.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function docsPage(urls: { css: string; bundle: string; script: string; icon: string }, title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" type="image/png" href="${urls.icon}">
<link rel="stylesheet" href="${urls.css}">
</head>
<body>
<noscript>This page renders <a href="/openapi.json">/openapi.json</a> with JavaScript; without it, read the document itself.</noscript>
<div id="swagger-ui"></div>
<script src="${urls.bundle}"></script>
<script src="${urls.script}"></script>
</body>
</html>
`;
}
