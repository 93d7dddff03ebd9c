// Erasure of a group through the real API, worker, relay, PostgreSQL and Temporal: the personal
// fields become tombstones everywhere they were stored, the books read exactly as before and
// balance, later events naming the erased ids are refused, and the chg_erased webhook arrives
// signed as every other.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { assertError, newIssuer, type TestIssuer } from '../helpers/app';
import { cardOf, settledEvent, storedEvent } from '../helpers/events';
import { groupBody, uniq } from '../helpers/groups';
import { activate, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { newId } from '../../core/ids';
import { previewChunk } from '../../core/domain/statements';
import { sqlTransaction } from '../../prisma/sql-transaction';
import { configureEndpoint, startReceiver, waitFor, type Receiver } from '../helpers/webhooks';

describe('erasure of a cardholder group (end to end)', function () {
  this.timeout(180_000);
  let stack: Stack;
  let receiver: Receiver;
  let issuer: TestIssuer;
  let secret: string;
  let merchant: any;

  before(async () => {
    stack = await startStack();
    receiver = await startReceiver();
    issuer = await newIssuer(stack.app);
    secret = await configureEndpoint(issuer, receiver.url, ['qualified_settlement', 'chg_erased']);
    ({ merchant } = await merchantWithOffer(stack.app, {
      brandedBalance: true,
      offer: { cashbackRateBps: 500, brandedRateBps: 300 },
    }));
  });
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  /** Two cardholders, three cards, a display name and metadata: the personal data to erase. */
  const personalGroup = () =>
    groupBody({
      segments: ['lapsed'],
      settings: { displayName: `Smith ${uniq('n')}`, metadata: { email: `${uniq('e')}@example.com` } },
      cardholders: [
        {
          externalId: uniq('c'),
          status: 'active',
          cards: [
            { externalId: uniq('k'), last4: '1111', bin: '411111', network: 'visa', status: 'active' },
            { externalId: uniq('k'), last4: '2222', network: 'visa', status: 'active' },
          ],
        },
        {
          externalId: uniq('c'),
          status: 'active',
          cards: [{ externalId: uniq('k'), last4: '3333', network: 'mastercard', status: 'active' }],
        },
      ],
    });

  async function settle(card: ReturnType<typeof cardOf>, amount: number, extra: Record<string, unknown> = {}) {
    const event = settledEvent(card, { amount, merchantId: merchant.id, ...extra });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    return { event, row };
  }

  /** What the books say of the group: its summary, its activity, every ledger account of it. */
  async function books(chgId: string) {
    const summary = await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`);
    const activity = await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/activity?limit=100`);
    assert.equal(summary.status, 200, summary.text);
    assert.equal(activity.status, 200, activity.text);
    const accounts = await stack.db.$queryRaw<Array<{ id: string; balance: bigint }>>`
      SELECT id, balance_minor AS balance FROM ledger_account WHERE chg_id = ${chgId} ORDER BY id`;
    const transfers = await stack.db.$queryRaw<Array<{ n: bigint }>>`
      SELECT count(*) AS n FROM ledger_transfer t JOIN ledger_account a ON a.id IN (t.debit_account_id, t.credit_account_id)
       WHERE a.chg_id = ${chgId}`;
    // What the merchant's statement for the month would bill, read as a billing run reads it.
    const period = new Date().toISOString().slice(0, 7);
    const chunk = await sqlTransaction(stack.db, (tx) =>
      previewChunk(tx, { runId: 'erasure-test', period, afterAccountId: '', at: new Date(), issuerId: issuer.id }),
    );
    const statements = chunk.statements.map((s) => ({
      merchantId: s.merchantId,
      lines: s.lines,
      totalDueMinor: s.totalDueMinor,
      transferCount: s.transferCount,
    }));
    assert.ok(
      statements.some((s) => s.merchantId === merchant.id && s.totalDueMinor > 0),
      'a statement to compare',
    );
    return { summary: summary.body, activity: activity.body, accounts, transfers: transfers[0].n, statements };
  }

  /** Every stored row that still holds one of the strings, by table. */
  async function holding(chgId: string, secrets: string[]): Promise<string[]> {
    const found: string[] = [];
    const rows = await stack.db.$queryRaw<Array<{ tbl: string; t: string }>>`
      SELECT 'cardholder_group' AS tbl, row_to_json(t)::text AS t FROM cardholder_group t WHERE id = ${chgId}
      UNION ALL SELECT 'cardholder', row_to_json(t)::text FROM cardholder t WHERE chg_id = ${chgId}
      UNION ALL SELECT 'card', row_to_json(t)::text FROM card t WHERE chg_id = ${chgId}
      UNION ALL SELECT 'ingested_event', row_to_json(t)::text FROM ingested_event t WHERE chg_id = ${chgId}
      UNION ALL SELECT 'claim', row_to_json(t)::text FROM claim t WHERE chg_id = ${chgId}
      UNION ALL SELECT 'adjustment', row_to_json(t)::text FROM adjustment t WHERE chg_id = ${chgId}
      UNION ALL SELECT 'chg_erasure', row_to_json(t)::text FROM chg_erasure t WHERE chg_id = ${chgId}
      UNION ALL SELECT 'erased_external_id', row_to_json(t)::text FROM erased_external_id t WHERE chg_id = ${chgId}`;
    for (const { tbl, t } of rows) for (const s of secrets) if (t.includes(s)) found.push(`${tbl}: ${s}`);
    return found;
  }

  it('replaces every personal field by a tombstone, keeps the books as they were, and refuses later events', async () => {
    const body = personalGroup();
    const created = await issuer.call('POST', '/api/v2/chg', body);
    assert.equal(created.status, 201, created.text);
    const group = created.body;
    await activate(issuer, group.id, merchant.id);
    const card = cardOf(group);
    const { event: purchase, row } = await settle(card, 10_000);
    const note = `called from ${uniq('phone')}`;
    const adjusted = await stack.app.request('POST', `/api/v2/chg/${group.id}/adjustments`, {
      token: issuer.token,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { balanceType: 'cashback', amountMinor: 150, reasonCode: 'goodwill', note },
    });
    assert.equal(adjusted.status, 201, adjusted.text);
    const claimNote = `cardholder ${uniq('claim')} says`;
    const claim = await issuer.call('POST', `/api/v2/chg/${group.id}/claims`, {
      transactionId: row.id,
      reason: 'wrong_amount',
      note: claimNote,
    });
    assert.equal(claim.status, 202, claim.text);
    const before = await books(group.id);

    const erased = await stack.app.request('POST', `/api/v2/chg/${group.id}/erase`, {
      token: issuer.token,
      headers: { 'Idempotency-Key': randomUUID() },
    });
    assert.equal(erased.status, 202, erased.text);
    assert.equal(erased.body.chgId, group.id);
    assert.equal(erased.body.status, 'erased');
    assert.deepEqual(erased.body.replaced, { cardholders: 2, cards: 3, events: 0, claims: 1, adjustments: 1 });

    // The group reads as tombstones, under the same ids.
    const read = (await issuer.call('GET', `/api/v2/chg/${group.id}`)).body;
    assert.equal(read.externalId, `erased ${group.id}`);
    assert.deepEqual(
      [read.status, read.settings, read.segments, read.erasedAt],
      ['inactive', {}, [], erased.body.erasedAt],
    );
    for (const [i, ch] of read.cardholders.entries()) {
      assert.equal(ch.id, group.cardholders[i].id);
      assert.equal(ch.externalId, `erased ${ch.id}`);
      for (const k of ch.cards)
        assert.deepEqual([k.externalId, k.last4, k.bin, k.status], [`erased ${k.id}`, '0000', null, 'inactive']);
    }
    const personal = [
      body.externalId,
      body.settings.displayName as string,
      (body.settings.metadata as unknown as { email: string }).email,
      ...body.cardholders.flatMap((ch: any) => [ch.externalId, ...ch.cards.map((k: any) => k.externalId)]),
      '411111',
      note,
      claimNote,
    ];
    assert.deepEqual(await holding(group.id, personal), []);

    // The books: the same summary, activity, accounts, transfers and statement, and a balanced ledger.
    assert.deepEqual(await books(group.id), before);
    await assertLedgerHealthy(stack.db, issuer.id);

    // Later events naming the erased ids, the issuer's or ours, are refused; others as before.
    const byTheirs = settledEvent(card, { merchantId: merchant.id });
    const byOurs = settledEvent(
      { cardholderId: group.cardholders[0].id, cardId: group.cardholders[0].cards[0].id, last4: '1111' },
      { merchantId: merchant.id },
    );
    const refund = settledEvent(card, { state: 'refunded', amount: 100, relatedTransactionId: purchase.id });
    const stranger = settledEvent({ cardholderId: uniq('c'), cardId: uniq('k'), last4: '4242' });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', [byTheirs, byOurs, refund, stranger]);
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(
      res.body.map((f: any) => [f.index, f.error.reasonCode]),
      [
        [0, 'chg_erased'],
        [1, 'chg_erased'],
        [2, 'chg_erased'],
        [3, 'unknown_cardholder'],
      ],
    );

    // The webhook, signed as every other.
    const delivered = await waitFor('chg_erased delivered', async () =>
      receiver.requests.find((r) => JSON.parse(r.body).type === 'chg_erased' && r.body.includes(group.id)),
    );
    const verified = new Webhook(secret).verify(delivered.body, delivered.headers as Record<string, string>) as any;
    assert.deepEqual(verified.data, { chgId: group.id, erasedAt: erased.body.erasedAt });

    // Asking again answers the same erasure, and writes no second webhook.
    const again = await issuer.call('POST', `/api/v2/chg/${group.id}/erase`);
    assert.equal(again.status, 202, again.text);
    assert.deepEqual(again.body, erased.body);
    assert.equal(await stack.db.webhook.count({ where: { issuerId: issuer.id, type: 'chg_erased' } }), 1);
  });

  it('answers 404 for another issuer, and lets the old external id register a new group', async () => {
    const body = personalGroup();
    const group = (await issuer.call('POST', '/api/v2/chg', body)).body;
    const other = await newIssuer(stack.app);
    assertError(await other.call('POST', `/api/v2/chg/${group.id}/erase`), 404, 'chg_not_found');
    assertError(await issuer.call('POST', `/api/v2/chg/${newId('chg')}/erase`), 404, 'chg_not_found');
    assert.equal((await issuer.call('POST', `/api/v2/chg/${group.id}/erase`)).status, 202);
    const again = await issuer.call('POST', '/api/v2/chg', body);
    assert.equal(again.status, 201, again.text);
    assert.notEqual(again.body.id, group.id);
    // The new group's cards are known again: an event naming them is accepted.
    const res = await issuer.call('POST', '/api/v1/incoming-txn', settledEvent(cardOf(again.body)));
    assert.equal(res.status, 204, res.text);
  });

  it('takes the card references out of events stored before ingestion stopped keeping them', async () => {
    const group = (await issuer.call('POST', '/api/v2/chg', personalGroup())).body;
    await activate(issuer, group.id, merchant.id);
    const card = cardOf(group);
    const { row } = await settle(card, 2_000);
    // As an older release stored it: the event as sent.
    await stack.db.$executeRaw`
      UPDATE ingested_event SET payload = payload || jsonb_build_object('cardholderId', ${card.cardholderId}::text,
             'cardId', ${card.cardId}::text, 'cardLast4', ${card.last4}::text) WHERE id = ${row.id}`;
    const erased = await issuer.call('POST', `/api/v2/chg/${group.id}/erase`);
    assert.equal(erased.body.replaced.events, 1);
    const payload = (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: row.id } })).payload as any;
    assert.deepEqual(
      [payload.cardholderId, payload.cardId, payload.cardLast4],
      [row.cardholderId, row.cardId, undefined],
    );
    assert.equal(payload.amount, 2_000);
  });
});
