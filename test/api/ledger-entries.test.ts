// Ledger lineage over HTTP: the issuer's ledger-entries of a transaction (its transfers and
// entries, one per reward event reward-detail lists), the operator's account statement, and the
// trial balance by pages. Purchases and refunds are ingested (stored, not processed: no worker);
// their reward events and transfers are posted by the real ledger functions.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { assertLedgerHealthy } from '../helpers/ledger';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { createMerchant, walkPages } from '../helpers/catalogue';
import { brandedEarned, brandedSpent, cashbackClawedBack, cashbackEarned } from '../helpers/reward-fixtures';
import { accounts } from '../../core/ledger';

const DAY_MS = 86_400_000;

describe('ledger lineage and account entries', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let other: TestIssuer;
  let chgId: string;
  let otherChgId: string;
  let merchantId: string;
  let purchaseId: string;
  let refundId: string;
  let pendingId: string;
  const events: Record<string, string> = {};
  const t0 = new Date(Date.now() - 60_000);
  const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

  /** Stores a settled event of the group and returns its txn_ id. */
  async function ingest(
    who: TestIssuer,
    group: any,
    overrides: Record<string, unknown> = {},
  ): Promise<{ id: string; externalId: string }> {
    const event = settledEvent(cardOf(group), { id: `txn-${randomUUID()}`, ...overrides });
    const res = await who.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const stored = await app.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: who.id, externalId: event.id, kind: 'settled' },
    });
    return { id: stored.id, externalId: event.id };
  }

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    other = await newIssuer(app);
    merchantId = (await createMerchant(app)).id;
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    chgId = group.id;
    otherChgId = (await other.call('POST', '/api/v2/chg', groupBody())).body.id;
    const purchase = await ingest(issuer, group, { amount: 10_000 });
    purchaseId = purchase.id;
    refundId = (
      await ingest(issuer, group, { state: 'refunded', amount: 2_000, relatedTransactionId: purchase.externalId })
    ).id;
    pendingId = (await ingest(issuer, group)).id;
    const place = { issuerId: issuer.id, chgId, merchantId, transactionId: purchaseId };
    events.cashback = await cashbackEarned(app.db, { ...place, at: at(1) }, 250);
    events.branded = await brandedEarned(app.db, { ...place, at: at(2) }, 400, {
      expiresAt: new Date(Date.now() + 30 * DAY_MS),
    });
    events.spent = await brandedSpent(app.db, { ...place, at: at(3) }, 150);
    // The refund's clawback belongs to the purchase and names the refund as its source, as refund.ts writes it.
    events.clawback = await cashbackClawedBack(app.db, { ...place, sourceEventId: refundId, at: at(4) }, 50);
  });
  after(async () => {
    await assertLedgerHealthy(app.db, issuer.id);
    await app.close();
  });

  it("lists the transfers behind the purchase's reward events with balanced, signed entries", async () => {
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${purchaseId}/ledger-entries`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.transactionId, purchaseId);
    const transfers = res.body.data;
    assert.deepEqual(
      transfers.map((t: any) => [t.kind, t.rewardEventId, t.rewardEventType, t.amountMinor]),
      [
        ['earn_cashback', events.cashback, 'cashback_earned', 250],
        ['earn_branded', events.branded, 'branded_earned', 400],
        ['spend_branded', events.spent, 'branded_spent', 150],
        ['clawback_cashback', events.clawback, 'cashback_clawed_back', 50],
      ],
    );
    const receivable = accounts.merchantReceivable(issuer.id, merchantId).id;
    const cashback = accounts.chgCashback(issuer.id, chgId).id;
    const branded = accounts.chgBranded(issuer.id, chgId, merchantId).id;
    // Debits negative, credits positive (API.md), debit first.
    assert.deepEqual(transfers[0].entries, [
      {
        accountId: receivable,
        accountKind: 'merchant_receivable',
        chgId: null,
        merchantId,
        direction: 'debit',
        amountMinor: -250,
        currency: 'usd',
      },
      {
        accountId: cashback,
        accountKind: 'chg_cashback',
        chgId,
        merchantId: null,
        direction: 'credit',
        amountMinor: 250,
        currency: 'usd',
      },
    ]);
    assert.deepEqual(
      transfers[2].entries.map((e: any) => [e.accountId, e.direction, e.amountMinor]),
      [
        [branded, 'debit', -150],
        [receivable, 'credit', 150],
      ],
    );
    for (const t of transfers) {
      assert.equal(
        t.entries.reduce((s: number, e: any) => s + e.amountMinor, 0),
        0,
        `transfer ${t.transferId} balances`,
      );
      assert.equal(t.transactionId, purchaseId);
    }
    assert.deepEqual(
      transfers.map((t: any) => t.postedAt),
      [at(1), at(2), at(3), at(4)].map((d) => d.toISOString()),
    );
  });

  it('covers exactly the reward events reward-detail lists, for the purchase and for its refund', async () => {
    for (const txnId of [purchaseId, refundId]) {
      const detail = await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${txnId}/reward-detail`);
      const lineage = await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${txnId}/ledger-entries`);
      assert.equal(lineage.status, 200, lineage.text);
      assert.deepEqual(
        lineage.body.data.map((t: any) => t.rewardEventId).sort(),
        [...detail.body.rewardEventIds].sort(),
      );
    }
    const refund = await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${refundId}/ledger-entries`);
    assert.deepEqual(
      refund.body.data.map((t: any) => t.kind),
      ['clawback_cashback'],
    );
  });

  it('answers an empty list for a transaction with no reward events', async () => {
    const res = await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${pendingId}/ledger-entries`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { transactionId: pendingId, data: [] });
  });

  it("answers another issuer's ids and missing ones with the same 404s as reward-detail, malformed ones with 400", async () => {
    const path = (chg: string, txn: string) => `/api/v2/chg/${chg}/transaction/${txn}/ledger-entries`;
    const missingTxn = `txn_${randomUUID()}`;
    const missingChg = `chg_${randomUUID()}`;
    assertError(await other.call('GET', path(chgId, purchaseId)), 404, 'chg_not_found');
    assertError(await other.call('GET', path(otherChgId, purchaseId)), 404, 'transaction_not_found');
    assertError(await issuer.call('GET', path(chgId, missingTxn)), 404, 'transaction_not_found');
    assertError(await issuer.call('GET', path(missingChg, purchaseId)), 404, 'chg_not_found');
    assertError(await issuer.call('GET', path(otherChgId, purchaseId)), 404, 'chg_not_found');
    // The same answers reward-detail gives, reason for reason.
    for (const [who, chg, txn] of [
      [other, chgId, purchaseId],
      [other, otherChgId, purchaseId],
      [issuer, chgId, missingTxn],
    ] as const) {
      const detail = await who.call('GET', `/api/v2/chg/${chg}/transaction/${txn}/reward-detail`);
      const lineage = await who.call('GET', path(chg, txn));
      assert.equal(lineage.body.reasonCode, detail.body.reasonCode);
    }
    assertError(await issuer.call('GET', path(chgId, 'txn_nope')), 400, 'invalid_id');
    assertError(await issuer.call('GET', path(chgId, `auth_${randomUUID()}`)), 400, 'invalid_id');
    assertError(await app.request('GET', path(chgId, purchaseId)), 401, 'missing_token');
  });

  it("gives the operator an account's entries newest first, page by page, with the account in the same snapshot", async () => {
    const receivable = accounts.merchantReceivable(issuer.id, merchantId).id;
    const operator = { call: (method: string, path: string) => app.operator(method, path) };
    const entries = await walkPages(operator, `/admin/v1/ledger/accounts/${encodeURIComponent(receivable)}/entries`, 3);
    assert.deepEqual(
      entries.map((e) => [e.transferKind, e.direction, e.amountMinor]),
      [
        ['clawback_cashback', 'credit', 50],
        ['spend_branded', 'credit', 150],
        ['earn_branded', 'debit', -400],
        ['earn_cashback', 'debit', -250],
      ],
    );
    assert.deepEqual(
      entries.map((e) => e.rewardEventId),
      [events.clawback, events.spent, events.branded, events.cashback],
    );
    assert.equal(entries[3].counterAccountId, accounts.chgCashback(issuer.id, chgId).id);
    assert.equal(entries[3].idempotencyKey, `fixture:${events.cashback}`);
    const first = await app.operator('GET', `/admin/v1/ledger/accounts/${receivable}/entries?limit=1`);
    assert.equal(first.status, 200, first.text);
    // Debit-normal: 250 + 400 earned, less 150 spent and 50 clawed back.
    assert.deepEqual(first.body.account, {
      id: receivable,
      kind: 'merchant_receivable',
      issuerId: issuer.id,
      chgId: null,
      merchantId,
      normalSide: 'debit',
      balanceMinor: 450,
      currency: 'usd',
    });
    // Minus the signed entries (debits negative) is the balance of a debit-normal account.
    assert.equal(-entries.reduce((s, e) => s + e.amountMinor, 0), 450);
  });

  it('refuses the account route to issuers, and malformed ids, unknown accounts and forged cursors', async () => {
    const receivable = accounts.merchantReceivable(issuer.id, merchantId).id;
    assertError(await issuer.call('GET', `/admin/v1/ledger/accounts/${receivable}/entries`), 401);
    assertError(await app.operator('GET', '/admin/v1/ledger/accounts/not-an-account/entries'), 400, 'invalid_id');
    assertError(
      await app.operator('GET', `/admin/v1/ledger/accounts/${issuer.id}:petty_cash/entries`),
      400,
      'invalid_id',
    );
    assertError(
      await app.operator('GET', `/admin/v1/ledger/accounts/${accounts.breakage(issuer.id, merchantId).id}/entries`),
      404,
      'account_not_found',
    );
    const forged = Buffer.from(JSON.stringify(['1 OR 1=1'])).toString('base64url');
    assertError(
      await app.operator('GET', `/admin/v1/ledger/accounts/${receivable}/entries?cursor=${forged}`),
      400,
      'invalid_query',
    );
    assertError(
      await app.operator('GET', `/admin/v1/ledger/accounts/${receivable}/entries?limit=0`),
      400,
      'invalid_query',
    );
  });

  it("pages the trial balance in the order of the whole one, each page with the whole ledger's total", async () => {
    const whole = await app.operator('GET', `/admin/v1/ledger/trial-balance?issuerId=${issuer.id}`);
    assert.equal(whole.status, 200, whole.text);
    assert.equal(whole.body.nextCursor, null);
    assert.equal(whole.body.accounts.length, 3);
    const pages: any[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const res: any = await app.operator(
        'GET',
        `/admin/v1/ledger/trial-balance?issuerId=${issuer.id}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.totalMinor, 0);
      pages.push(res.body);
      cursor = res.body.nextCursor;
      if (!cursor) break;
    }
    assert.deepEqual(
      pages.map((p) => p.accounts.length),
      [2, 1],
    );
    assert.deepEqual(
      pages.flatMap((p) => p.accounts),
      whole.body.accounts,
    );
    // Every issuer, one account per page, still in order and ending.
    const all = await app.operator('GET', '/admin/v1/ledger/trial-balance?limit=200');
    assert.equal(all.status, 200);
    assert.equal(all.body.totalMinor, 0);
    const forged = Buffer.from(JSON.stringify([1, 2, 3])).toString('base64url');
    assertError(await app.operator('GET', `/admin/v1/ledger/trial-balance?cursor=${forged}`), 400, 'invalid_query');
  });
});
