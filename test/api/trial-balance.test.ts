import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp } from '../helpers/app';
import { assertLedgerHealthy, at, chgId, key, merchantId, plusDays } from '../helpers/ledger';
import { earnBranded, inTransaction, postTransferInNewTransaction, spendBranded } from '../../core/domain/ledger';

describe('GET /admin/v1/ledger/trial-balance', () => {
  let app: TestApp;
  before(async () => (app = await startTestApp()));
  after(() => app.close());

  it('returns every account of the issuer with debits, credits and a zero total', async () => {
    const issuer = await newIssuer(app);
    const p = { issuerId: issuer.id, chgId: chgId(), merchantId: merchantId(), at: at() };
    await postTransferInNewTransaction(app.db, {
      ...p,
      kind: 'earn_cashback',
      amountMinor: 250,
      idempotencyKey: key(),
    });
    await inTransaction(app.db, (tx) =>
      earnBranded(tx, {
        ...p,
        amountMinor: 400,
        idempotencyKey: key(),
        availableAt: p.at,
        expiresAt: plusDays(p.at, 30),
      }),
    );
    await inTransaction(app.db, (tx) =>
      spendBranded(tx, { ...p, maxAmountMinor: 150, idempotencyKey: key(), at: plusDays(p.at, 1) }),
    );

    const res = await app.operator('GET', `/admin/v1/ledger/trial-balance?issuerId=${issuer.id}`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.currency, 'usd');
    assert.equal(res.body.totalMinor, 0);
    const byKind = Object.fromEntries(
      res.body.accounts.map((a: any) => [a.kind, [a.debitsMinor, a.creditsMinor, a.balanceMinor]]),
    );
    assert.deepEqual(byKind, {
      merchant_receivable: [650, 150, 500],
      chg_cashback: [0, 250, 250],
      chg_branded: [150, 400, 250],
    });
    for (const a of res.body.accounts) assert.equal(a.issuerId, issuer.id);
    await assertLedgerHealthy(app.db, issuer.id);
  });

  it('covers every issuer without a filter and still sums to zero', async () => {
    const res = await app.operator('GET', '/admin/v1/ledger/trial-balance');
    assert.equal(res.status, 200);
    assert.equal(res.body.totalMinor, 0);
    assert.ok(Array.isArray(res.body.accounts));
    await assertLedgerHealthy(app.db);
  });

  it('requires the operator token, even from an issuer', async () => {
    const issuer = await newIssuer(app);
    assertError(await app.request('GET', '/admin/v1/ledger/trial-balance'), 401, 'missing_token');
    assertError(await issuer.call('GET', '/admin/v1/ledger/trial-balance'), 401);
  });

  it('rejects a malformed issuer id and unknown parameters', async () => {
    assertError(await app.operator('GET', '/admin/v1/ledger/trial-balance?issuerId=nope'), 400, 'invalid_query');
    assertError(
      await app.operator('GET', '/admin/v1/ledger/trial-balance?issuerId=chg_00000000-0000-0000-0000-000000000000'),
      400,
      'invalid_query',
    );
    assertError(await app.operator('GET', '/admin/v1/ledger/trial-balance?page=5'), 400, 'invalid_query');
    assertError(await app.operator('GET', '/admin/v1/ledger/trial-balance?limit=201'), 400, 'invalid_query');
  });
});
