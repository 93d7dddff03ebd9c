// The generated TypeScript client (clients/typescript): current with the committed openapi.json,
// type-checked, and used end to end against the real API and worker the way an issuer's
// engineers would use it: create a group, read it, activate a merchant, send a settled purchase,
// read its reward. Every answer it gets is also checked against /openapi.json.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startStack, type Stack } from '../helpers/stack';
import { newIssuer, OPERATOR_TOKEN, type TestIssuer } from '../helpers/app';
import { contractViolation } from '../helpers/contract';
import { daysFromNow } from '../helpers/catalogue';
import { uniq } from '../helpers/groups';
import { OPENAPI_FILE } from '../../api/openapi-published';
import { CLIENT_SCHEMA_FILE, generateClientSchema } from '../../clients/typescript/generate';
import { createRewardsClient, type Schemas } from '../../clients/typescript';

const ROOT = join(__dirname, '..', '..');

/** fetch that holds every answer against /openapi.json, as test/helpers/app.ts does for its own calls. */
const checkedFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  const text = await response.clone().text();
  const body = text ? JSON.parse(text) : undefined;
  const violation = contractViolation(
    request.method,
    new URL(request.url).pathname,
    response.status,
    response.headers.get('content-type'),
    body,
  );
  assert.equal(violation, undefined, `response off /openapi.json: ${violation}`);
  return response;
};

describe('Generated TypeScript client (clients/typescript)', function () {
  this.timeout(120_000);

  it('is what openapi-typescript generates now from the committed openapi.json', () => {
    const committed = readFileSync(CLIENT_SCHEMA_FILE, 'utf8');
    assert.ok(
      committed === generateClientSchema(OPENAPI_FILE),
      'clients/typescript/schema.ts is stale: run `npm run openapi` and commit it',
    );
  });

  it('type-checks (its own project; `npm run typecheck` covers it too)', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    execFileSync(process.execPath, [tsc, '--noEmit', '-p', join(ROOT, 'clients', 'typescript')], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  });

  describe('against the real API and worker', () => {
    let stack: Stack;
    let issuer: TestIssuer;
    before(async () => {
      stack = await startStack();
      issuer = await newIssuer(stack.app);
    });
    after(() => stack?.stop());

    it('creates a group, reads it, earns on a settled purchase and reads the reward', async () => {
      const api = createRewardsClient({ baseUrl: stack.app.url, token: issuer.token, fetch: checkedFetch });
      const operator = createRewardsClient({ baseUrl: stack.app.url, token: OPERATOR_TOKEN, fetch: checkedFetch });

      const merchant = await operator.POST('/admin/v1/merchants', {
        body: { name: uniq('Client Coffee'), category: 'dining' },
      });
      assert.equal(merchant.response.status, 201, JSON.stringify(merchant.error));
      const merchantId = merchant.data!.id;
      const offer = await operator.POST('/admin/v1/merchants/{merchantId}/offers', {
        params: { path: { merchantId } },
        body: { title: '5% back', cashbackRateBps: 500, brandedRateBps: 0, startsAt: daysFromNow(-1) },
      });
      assert.equal(offer.response.status, 201, JSON.stringify(offer.error));

      const input: Schemas['GroupInput'] = {
        externalId: uniq('household'),
        cardholders: [{ externalId: uniq('c'), cards: [{ externalId: uniq('k'), last4: '4242', network: 'visa' }] }],
      };
      const created = await api.POST('/api/v2/chg', {
        body: input,
        params: { header: { 'Idempotency-Key': uniq('create') } },
      });
      assert.equal(created.response.status, 201, JSON.stringify(created.error));
      const group: Schemas['Group'] = created.data!;
      const read = await api.GET('/api/v2/chg/{chgId}', { params: { path: { chgId: group.id } } });
      assert.deepEqual(read.data, group);
      assert.ok(read.response.headers.get('X-Request-Id'));

      const activation = await api.PUT('/api/v2/chg/{chgId}/merchant/{merchantId}/activation', {
        params: { path: { chgId: group.id, merchantId } },
        body: {},
      });
      assert.equal(activation.data?.status, 'active');

      const [cardholder] = group.cardholders;
      const purchase: Schemas['SettledEvent'] = {
        id: uniq('t'),
        amount: 2500,
        currency: 'usd',
        merchantDescriptor: 'SQ *CLIENT COFFEE',
        mcc: '5814',
        createdAt: new Date().toISOString(),
        cardLast4: '4242',
        network: 'visa',
        cardholderId: cardholder.externalId,
        cardId: cardholder.cards[0].externalId,
        authMethod: 'contactless',
        state: 'settled',
        merchantId,
      };
      const ingested = await api.POST('/api/v1/incoming-txn', { body: purchase });
      assert.equal(ingested.response.status, 204, JSON.stringify(ingested.error));

      // The issuer knows its own id; reward-overviews answers ours (txn_) once processing ends.
      const detail = await waitForOutcome(api, group.id, purchase.id);
      const reward = await api.GET('/api/v2/chg/{chgId}/transaction/{txnId}/reward-detail', {
        params: { path: { chgId: group.id, txnId: detail.transactionId } },
      });
      const expected: Schemas['RewardDetail'] = {
        ...detail,
        status: 'matched',
        merchantId,
        earnedAmountMinor: 125,
        spentAmountMinor: 0,
        clawedBackAmountMinor: 0,
        currency: 'usd',
      };
      assert.deepEqual(reward.data, expected);

      // A typed error: the error object of the document, not an untyped body.
      const missing = await api.GET('/api/v2/chg/{chgId}', {
        params: { path: { chgId: 'chg_00000000-0000-4000-8000-000000000000' } },
      });
      assert.equal(missing.error?.reasonCode, 'chg_not_found');
    });
  });
});

async function waitForOutcome(
  api: ReturnType<typeof createRewardsClient>,
  chgId: string,
  externalId: string,
): Promise<Schemas['RewardDetail']> {
  for (let i = 0; i < 200; i++) {
    const { data } = await api.POST('/api/v2/chg/{chgId}/transactions/reward-overviews', {
      params: { path: { chgId } },
      body: { externalIds: [externalId] },
    });
    const detail = data?.data[0];
    if (detail && detail.status !== 'pending') return detail;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${externalId} still pending after 20 s`);
}
