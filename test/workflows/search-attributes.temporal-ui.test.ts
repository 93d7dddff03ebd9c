// An operator finds a transaction's workflow in the Temporal Web UI by our search attribute
// (workflows/search-attributes.ts, registered by worker/register-search-attributes.ts). Headless
// Chromium (Debian's `chromium` package, installed by `npm test`'s bootstrap) driven by
// playwright-core; the screenshot is written to test-output/temporal-ui.png.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { startTemporalDevServer, type TemporalDevServerHandle } from '../../scripts/lib/temporal-dev-server';
import { startStack, type Stack } from '../helpers/stack';
import { freePort } from '../helpers/ports';
import { settledEvent, storedEvent } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';
import { configureEndpoint, startReceiver, type Receiver } from '../helpers/webhooks';

const OUTPUT = join(__dirname, '..', '..', 'test-output');

describe('Temporal Web UI', function () {
  this.timeout(180_000);
  let server: TemporalDevServerHandle;
  let stack: Stack;
  let browser: Browser;
  let receiver: Receiver;

  before(async function () {
    const port = await freePort();
    server = await startTemporalDevServer({ port, uiPort: await freePort() });
    // The first attempt of each webhook fails, so its retries run as a WebhookDelivery workflow.
    stack = await startStack({ temporalAddress: server.address, settings: { webhookRetryScheduleMs: [200] } });
    receiver = await startReceiver((n) => (n === 0 ? 503 : 204));
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await receiver?.close();
    await stack?.stop();
    await server?.stop();
  });

  it('finds a transaction by RewardsTransactionId', async () => {
    const { issuer, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 500 } });
    await configureEndpoint(issuer, receiver.url);
    const event = settledEvent(card, { merchantId: merchant.id });
    await issuer.call('POST', '/api/v1/incoming-txn', event);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    await stack.waitForStatus(row.id, ['matched']);

    const query = `RewardsTransactionId="${row.id}"`;
    // Visibility is eventually consistent: wait until the server's own query finds it.
    for (let i = 0; i < 100 && (await stack.client.workflow.count(query)).count === 0; i++)
      await new Promise((r) => setTimeout(r, 200));

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${server.uiUrl}/namespaces/default/workflows?query=${encodeURIComponent(query)}`);
    await page.getByText(row.workflowId).first().waitFor({ timeout: 60_000 });
    mkdirSync(OUTPUT, { recursive: true });
    await page.screenshot({ path: join(OUTPUT, 'temporal-ui.png'), fullPage: true });
    assert.ok((await page.getByText(row.workflowId).count()) >= 1);
    assert.equal((await page.getByText('transactionLifecycle').count()) >= 1, true);
    // The same query finds the transaction's webhook retries (their workflow carries the id too).
    const webhook = await stack.db.webhook.findFirstOrThrow({ where: { sourceEventId: row.id } });
    assert.ok((await stack.client.workflow.count(query)).count >= 1);
    for (let i = 0; i < 100 && (await stack.client.workflow.count(query)).count < 2; i++)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal((await stack.client.workflow.count(query)).count, 2, `lifecycle and webhook/${webhook.id}`);
  });
});
