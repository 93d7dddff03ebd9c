// The operator console (GET /console) in a real Chromium (Debian's package, driven by
// playwright-core), over the real stack: a support operator approves a claim from the queue and
// sees it leave; a finance operator records a payment that waits for a second operator, who
// approves it from the approvals queue; a merchant named like markup shows as text; the page
// asks nothing of another origin and breaks no Content-Security-Policy. Each page's screenshot is
// written to test-output/ (docs/operating/console/ keeps a copy for the runbook).
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/chromium';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { newIssuer, OPERATOR_TOKEN } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { purchaseScenario } from '../helpers/scenario';
import { waitFor } from '../helpers/webhooks';
import { nameOperator } from '../helpers/operators';
import { periodOf } from '../../core/rules/statements';

const OUTPUT = join(__dirname, '..', '..', 'test-output', 'console');
const MARKUP_NAME = '<img src=x onerror=alert(1)>';

const word = () =>
  Array.from(randomBytes(8))
    .map((b) => String.fromCharCode(65 + (b % 26)))
    .join('');

describe('the operator console in headless Chromium', function () {
  this.timeout(300_000);
  let stack: Stack;
  let browser: Browser;
  before(async () => {
    stack = await startStack();
    browser = await launchChromium();
    mkdirSync(OUTPUT, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** A page signed in with the token, watching for other origins, script errors and CSP reports. */
  async function signedIn(token: string) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const problems: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(stack.app.url) && !r.url().startsWith('blob:')) problems.push(`request to ${r.url()}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('dialog', (d) => {
      problems.push(`a dialog opened: ${d.message()}`);
      void d.dismiss();
    });
    await page.goto(`${stack.app.url}/console`);
    await page.fill('#token', token);
    await page.click('#signin button[type=submit]');
    await page.locator('#who').waitFor();
    return { page, problems };
  }

  const tab = async (page: Page, name: string) => {
    await page.click(`nav button[data-view="${name}"]`);
    await page.locator('#view h2').first().waitFor();
  };

  it('serves the page with a strict policy and no inline script', async () => {
    const res = await fetch(`${stack.app.url}/console`);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const html = await res.text();
    assert.doesNotMatch(html, /<script>[^<]/, 'no inline script');
  });

  it('lets support approve a claim from the queue, and the claim leaves it', async () => {
    const brand = word();
    const scenario = await purchaseScenario(stack.app, {
      environment: 'production',
      matchRules: { descriptorPatterns: [`${brand} COFFEE`] },
      offer: { cashbackRateBps: 500 },
    });
    const event = settledEvent(scenario.card, { merchantDescriptor: `${word()} ROASTERY`, amount: 2500 });
    assert.equal((await scenario.issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const stored = await stack.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: scenario.issuer.id, kind: 'settled', externalId: event.id },
    });
    await stack.waitForStatus(stored.id, FINAL_STATUSES);
    const filed = await scenario.issuer.call('POST', `/api/v2/chg/${scenario.group.id}/claims`, {
      reason: 'missing_reward',
      transactionId: stored.id,
      merchantId: scenario.merchant.id,
    });
    assert.equal(filed.status, 202, filed.text);
    await waitFor('claim in review', async () => {
      const res = await scenario.issuer.call('GET', `/api/v2/chg/${scenario.group.id}/claims/${filed.body.id}`);
      return res.body.status === 'needs_review' ? res.body : undefined;
    });

    const support = await nameOperator(stack.app, ['support']);
    const { page, problems } = await signedIn(support.token);
    await tab(page, 'claims');
    const row = page.locator(`tr[data-id="${filed.body.id}"]`);
    await row.waitFor();
    await page.screenshot({ path: join(OUTPUT, 'claims.png') });
    await row.locator('button.approve').click();
    await page.locator('#answer[data-status="200"]').waitFor();
    await row.waitFor({ state: 'detached' });
    const claim = await scenario.issuer.call('GET', `/api/v2/chg/${scenario.group.id}/claims/${filed.body.id}`);
    assert.equal(claim.body.status, 'approved');
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('has finance record a payment that waits for a second operator, who approves it in the queue', async () => {
    const merchant = await createMerchant(stack.app);
    await createOffer(stack.app, merchant.id, { cashbackRateBps: 500, startsAt: daysFromNow(-5) });
    const issuer = await newIssuer(stack.app, 'sandbox');
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
    const event = settledEvent(cardOf(group), { amount: 10_000, merchantId: merchant.id });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const stored = await stack.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: issuer.id, kind: 'settled', externalId: event.id },
    });
    await stack.waitForStatus(stored.id, FINAL_STATUSES);
    const period = periodOf(new Date());
    const started = await stack.app.request('POST', '/admin/v1/statements', {
      token: OPERATOR_TOKEN,
      body: { period },
      headers: { 'Idempotency-Key': randomUUID() },
    });
    assert.equal(started.status, 202, started.text);
    const statement = await waitFor('the statement', async () => {
      const res = await stack.app.operator('GET', `/admin/v1/statements?period=${period}&merchantId=${merchant.id}`);
      return res.body.data[0];
    });

    const maker = await nameOperator(stack.app, ['finance']);
    const first = await signedIn(maker.token);
    await tab(first.page, 'statements');
    // The merchant's statements: the first page of all of them may not reach a new one.
    await first.page.fill('#statement-merchant-picker input[name=merchantId]', merchant.id);
    await first.page.click('#statement-merchant-picker button[type=submit]');
    const row = first.page.locator(`tr[data-id="${statement.id}"]`);
    await row.locator('input[name=reference]').fill('WIRE 2026-12');
    await first.page.screenshot({ path: join(OUTPUT, 'statements.png') });
    await row.locator('form.pay button[type=submit]').click();
    await first.page.locator('#answer[data-status="202"]').waitFor();
    const approvalId = JSON.parse((await first.page.locator('#answer pre').textContent()) ?? '{}').approvalId as string;
    assert.match(approvalId, /^apr_/);
    await tab(first.page, 'approvals');
    // The maker sees their own call waiting, with nothing to press.
    const own = first.page.locator(`tr[data-id="${approvalId}"]`);
    await own.waitFor();
    assert.equal(await own.locator('button').count(), 0);
    assert.equal((await stack.app.operator('GET', `/admin/v1/statements/${statement.id}`)).body.paidMinor, 0);
    await first.page.close();

    const checker = await nameOperator(stack.app, ['finance']);
    const second = await signedIn(checker.token);
    await tab(second.page, 'approvals');
    const waiting = second.page.locator(`tr[data-id="${approvalId}"]`);
    await waiting.waitFor();
    await second.page.screenshot({ path: join(OUTPUT, 'approvals.png') });
    await waiting.locator('button.approve').click();
    await second.page.locator('#answer[data-status="200"]').waitFor();
    await waiting.waitFor({ state: 'detached' });
    const paid = await stack.app.operator('GET', `/admin/v1/statements/${statement.id}`);
    assert.deepEqual([paid.body.paidMinor, paid.body.status], [statement.totalDueMinor, 'paid']);
    assert.deepEqual([...first.problems, ...second.problems], []);
    await second.page.close();
  });

  it('shows a merchant named like markup as text, and the audit log', async () => {
    const merchant = await createMerchant(stack.app, { name: MARKUP_NAME });
    await createOffer(stack.app, merchant.id, { title: MARKUP_NAME });
    const viewer = await nameOperator(stack.app, ['viewer']);
    const { page, problems } = await signedIn(viewer.token);
    await tab(page, 'offers');
    await page.fill('#merchant-picker input[name=merchantId]', merchant.id);
    await page.click('#merchant-picker button[type=submit]');
    await page.locator('#view h3', { hasText: MARKUP_NAME }).waitFor();
    await page.getByText(MARKUP_NAME, { exact: true }).nth(1).waitFor();
    assert.equal(await page.locator('#view img').count(), 0, 'no element made from the name');
    await page.screenshot({ path: join(OUTPUT, 'offers.png') });
    await tab(page, 'audit');
    await page.locator('#view tbody tr').first().waitFor();
    await page.screenshot({ path: join(OUTPUT, 'audit.png') });
    // A viewer is offered no action on the claims queue.
    await tab(page, 'claims');
    assert.equal(await page.locator('#view button.approve').count(), 0);
    assert.deepEqual(problems, []);
    await page.close();
  });
});
