// The API reference page: served by the API with its own copy of Swagger UI (no CDN), and
// rendered by a real browser. Headless Chromium (Debian's `chromium` package, installed by
// `npm test`'s bootstrap) driven by playwright-core, as in test/workflows/search-attributes.temporal-ui.test.ts;
// the screenshot is written to test-output/docs.png.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { startTestApp, type TestApp } from '../helpers/app';
import { exampleId } from '../../api/schemas/examples';

const OUTPUT = join(__dirname, '..', '..', 'test-output');

/** The asset URLs the page names, in order: stylesheet and icon links, then scripts. */
function assetUrls(html: string): string[] {
  return [...html.matchAll(/(?:href|src)="(\/docs\/assets\/[^"]+)"/g)].map((m) => m[1]);
}

describe('GET /docs', function () {
  this.timeout(120_000);
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  it('answers an HTML page without a token, revalidated on every visit, that loads nothing from another origin', async () => {
    const res = await app.request('GET', '/docs');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^text\/html; charset=utf-8/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const csp = res.headers.get('content-security-policy')!;
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(res.text, /https?:\/\//, 'no absolute URL: every file comes from this API');
    assert.deepEqual(
      assetUrls(res.text).map((u) => u.split('/').pop()),
      ['favicon-32x32.png', 'swagger-ui.css', 'swagger-ui-bundle.js', 'docs.js'],
    );
  });

  it('serves the assets with their content types, cached for a year under URLs that change with their content', async () => {
    const page = await app.request('GET', '/docs');
    const types: Record<string, RegExp> = { css: /^text\/css/, js: /^text\/javascript/, png: /^image\/png/ };
    for (const url of assetUrls(page.text)) {
      const res = await fetch(app.url + url, { headers: { 'accept-encoding': 'identity' } });
      assert.equal(res.status, 200, url);
      assert.match(res.headers.get('content-type')!, types[url.split('.').pop()!], url);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', url);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.ok((await res.arrayBuffer()).byteLength > 0);
    }
    const bundle = assetUrls(page.text).find((u) => u.endsWith('swagger-ui-bundle.js'))!;
    const stale = bundle.replace(/\/docs\/assets\/[0-9a-f]+\//, '/docs/assets/0000000000000000/');
    assert.equal((await app.request('GET', stale)).status, 404, 'another build is not served under a year-long URL');
    assert.equal((await app.request('GET', '/docs/assets/x/../../openapi.json')).status, 404);
  });

  it('sends the scripts and styles compressed to a client that accepts gzip', async () => {
    const page = await app.request('GET', '/docs');
    const bundle = assetUrls(page.text).find((u) => u.endsWith('swagger-ui-bundle.js'))!;
    const plain = Buffer.from(
      await (await fetch(app.url + bundle, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer(),
    );
    // node:http instead of fetch, which would decompress on its own.
    const { request } = await import('node:http');
    const raw = await new Promise<{ encoding?: string; vary?: string; body: Buffer }>((resolve, reject) => {
      request(app.url + bundle, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ encoding: res.headers['content-encoding'], vary: res.headers.vary, body: Buffer.concat(chunks) }),
        );
      })
        .on('error', reject)
        .end();
    });
    assert.equal(raw.encoding, 'gzip');
    assert.match(raw.vary ?? '', /Accept-Encoding/i);
    assert.ok(raw.body.length < plain.length / 2, `${raw.body.length} of ${plain.length} bytes`);
    assert.ok(gunzipSync(raw.body).equals(plain));
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    before(async () => {
      browser = await launchChromium();
    });
    after(() => browser?.close());

    it('renders the operations and the webhooks from /openapi.json, with no request to another origin and no policy violation', async () => {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const elsewhere: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => {
        if (!r.url().startsWith(app.url) && !r.url().startsWith('data:')) elsewhere.push(r.url());
      });
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));

      await page.goto(`${app.url}/docs`);
      // Operations by their summary and operationId (displayOperationId), in their tag sections.
      await page
        .locator('.opblock-summary-path', { hasText: '/api/v2/chg/{chgId}' })
        .first()
        .waitFor({ timeout: 60_000 });
      assert.ok((await page.locator('.opblock').count()) >= 40, 'every operation is listed');
      for (const tag of ['Cardholder groups', 'Ingestion', 'Webhooks']) {
        assert.ok((await page.locator('.opblock-tag', { hasText: tag }).count()) >= 1, `tag ${tag}`);
      }
      await page.getByText('getTransactionRewardDetail').first().waitFor();
      // OpenAPI 3.1's webhooks: what the service POSTs to the issuer.
      await page.getByText('qualified_settlement', { exact: false }).first().waitFor();
      assert.ok(
        (await page.locator('.opblock', { hasText: 'qualified_settlement' }).count()) >= 1,
        'the webhook section',
      );

      mkdirSync(OUTPUT, { recursive: true });
      await page.screenshot({ path: join(OUTPUT, 'docs.png') });

      // One operation opened: its 200 shows the example declared beside the RewardDetail schema.
      await page.locator('.opblock-summary', { hasText: 'getTransactionRewardDetail' }).first().click();
      const responses = page.locator('.opblock.is-open .responses-wrapper');
      await responses
        .locator('.microlight', { hasText: exampleId('brevt', 2) })
        .first()
        .waitFor({ timeout: 30_000 });
      await responses.scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(OUTPUT, 'docs-operation.png') });
      assert.deepEqual(elsewhere, [], 'the page works offline');
      assert.deepEqual(problems, [], 'no script error or Content-Security-Policy violation');
    });
  });
});
