import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { authEvent, cardOf, settledEvent, type CardRef } from '../helpers/events';
import type { HandoverItem } from '../../core/domain/handover';

describe('ingestion routes', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  const handedOver: HandoverItem[] = [];
  before(async () => {
    app = await startTestApp({
      handover: { enqueue: (items) => handedOver.push(...items), drain: async () => undefined },
    });
    issuer = await newIssuer(app);
    group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    card = cardOf(group);
  });
  after(() => app.close());

  const stored = (kind: 'auth' | 'settled', externalId: string) =>
    app.db.ingestedEvent.findUnique({ where: { issuerId_kind_externalId: { issuerId: issuer.id, kind, externalId } } });

  it('accepts one authorization (204), stores it with a stable auth_ id and hands it over', async () => {
    const event = authEvent(card);
    const res = await issuer.call('POST', '/api/v1/incoming-auth', event);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    const row = await stored('auth', event.id);
    assert.ok(row);
    assert.match(row.id, /^auth_/);
    assert.equal(row.chgId, group.id);
    assert.equal(row.cardholderId, group.cardholders[0].id);
    assert.equal(row.cardId, group.cardholders[0].cards[0].id);
    assert.equal(row.amountMinor, 2500n);
    assert.equal(row.workflowId, `txn/${issuer.id}/${event.id}`);
    assert.equal(row.rewardStatus, 'pending');
    const item = handedOver.find((h) => h.eventId === row.id);
    assert.deepEqual(item && { signal: item.signal, workflowId: item.workflowId }, {
      signal: 'authorization',
      workflowId: row.workflowId,
    });

    assert.equal(
      (await issuer.call('POST', '/api/v1/incoming-auth', event)).status,
      204,
      'the same event again is accepted',
    );
    assert.equal((await stored('auth', event.id))!.id, row.id, 'and keeps its id');
    assert.equal(handedOver.filter((h) => h.eventId === row.id).length, 1, 'and is not handed over twice');
  });

  it("accepts the service's own ch_/card_ ids in place of the issuer's", async () => {
    const event = settledEvent({
      cardholderId: group.cardholders[0].id,
      cardId: group.cardholders[0].cards[0].id,
      last4: '4242',
    });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    assert.match((await stored('settled', event.id))!.id, /^txn_/);
  });

  it('keys a settlement by its authorization so both reach one workflow', async () => {
    const auth = authEvent(card);
    const settled = settledEvent(card, { authorizationId: auth.id });
    await issuer.call('POST', '/api/v1/incoming-txn', settled);
    await issuer.call('POST', '/api/v1/incoming-auth', auth);
    assert.equal((await stored('settled', settled.id))!.workflowId, (await stored('auth', auth.id))!.workflowId);
  });

  it('records an authorization reversal as a state change, once', async () => {
    const auth = authEvent(card);
    await issuer.call('POST', '/api/v1/incoming-auth', auth);
    const reversal = { ...auth, state: 'reversed' };
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', reversal)).status, 204);
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', reversal)).status, 204);
    const row = await stored('auth', auth.id);
    assert.equal(row!.state, 'reversed');
    assert.deepEqual(
      handedOver.filter((h) => h.eventId === row!.id).map((h) => h.signal),
      ['authorization', 'reversal'],
    );
    assert.equal(
      (await issuer.call('POST', '/api/v1/incoming-auth', auth)).status,
      204,
      'a late copy of the approval changes nothing',
    );
    assert.equal((await stored('auth', auth.id))!.state, 'reversed');
  });

  it('routes a refund to the workflow of the purchase it refunds', async () => {
    const purchase = settledEvent(card);
    const refund = settledEvent(card, { state: 'refunded', relatedTransactionId: purchase.id, amount: 1000 });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', [purchase, refund]);
    assert.equal(res.status, 204, res.text);
    const [p, r] = [await stored('settled', purchase.id), await stored('settled', refund.id)];
    assert.equal(r!.relatedEventId, p!.id);
    assert.equal(r!.workflowId, p!.workflowId);
  });

  it('reports every per-event failure reason with index and id, storing exactly the good events', async () => {
    const other = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    const good = [settledEvent(card), settledEvent(card)];
    const taken = settledEvent(card);
    await issuer.call('POST', '/api/v1/incoming-txn', taken);
    const batch = [
      good[0],
      { ...settledEvent(card), amount: -5 },
      settledEvent({ ...card, cardholderId: 'nobody' }),
      settledEvent({ ...card, cardId: 'no-such-card' }),
      settledEvent({ ...card, cardId: other.cardholders[0].cards[0].externalId }),
      { ...taken, amount: taken.amount + 1 },
      settledEvent(card, { state: 'refunded', relatedTransactionId: 'never-settled' }),
      good[1],
      'not an object',
    ];
    const res = await issuer.call('POST', '/api/v1/incoming-txn', batch);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.map((f: any) => [f.index, f.id, f.error.reasonCode]),
      [
        [1, (batch[1] as any).id, 'invalid_event'],
        [2, (batch[2] as any).id, 'unknown_cardholder'],
        [3, (batch[3] as any).id, 'unknown_card'],
        [4, (batch[4] as any).id, 'card_cardholder_mismatch'],
        [5, taken.id, 'id_conflict'],
        [6, (batch[6] as any).id, 'unknown_related_transaction'],
        [8, null, 'invalid_event'],
      ],
    );
    for (const f of res.body)
      assertError(
        { status: f.error.httpStatusCode, body: f.error, text: '', headers: new Headers() },
        f.error.httpStatusCode,
      );
    assert.equal(res.body[0].error.details.errors[0].path, '/amount');
    assert.equal(res.body[4].error.code, 40900);
    for (const e of good) assert.ok(await stored('settled', e.id));
    for (const i of [1, 2, 3, 4, 6]) assert.equal(await stored('settled', (batch[i] as any).id), null);
    assert.equal(
      (await stored('settled', taken.id))!.amountMinor,
      BigInt(taken.amount),
      'the conflicting copy changed nothing',
    );
  });

  it('answers 400 with the failures when no event was accepted', async () => {
    const res = await issuer.call('POST', '/api/v1/incoming-txn', { ...settledEvent(card), state: 'refunded' });
    assert.equal(res.status, 400);
    assert.equal(res.body.length, 1);
    assert.equal(res.body[0].error.reasonCode, 'invalid_event');
    assert.ok(res.body[0].error.details.errors.some((e: any) => e.path === '/relatedTransactionId'));
  });

  it('validates every field rule of an event', async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ['/amount', { amount: 0 }],
      ['/amount', { amount: 12.5 }],
      ['/amount', { amount: '100' }],
      ['/currency', { currency: 'USD' }],
      ['/mcc', { mcc: '581' }],
      ['/createdAt', { createdAt: '2026-11-22 10:00' }],
      ['/createdAt', { createdAt: '2026-11-22T10:00:00' }],
      ['/cardLast4', { cardLast4: '42' }],
      ['/network', { network: 'unionpay' }],
      ['/authMethod', { authMethod: 'telepathy' }],
      ['/state', { state: 'pending' }],
      ['/extra', { extra: 1 }],
      ['/merchantDescriptor', { merchantDescriptor: '' }],
    ];
    for (const [path, patch] of cases) {
      const res = await issuer.call('POST', '/api/v1/incoming-auth', { ...authEvent(card), ...patch });
      assert.equal(res.status, 400, `${path} ${JSON.stringify(patch)}`);
      assert.ok(
        res.body[0].error.details.errors.some((e: any) => e.path === path),
        `${path}: ${JSON.stringify(res.body[0].error.details)}`,
      );
    }
    const res = await issuer.call('POST', '/api/v1/incoming-auth', authEvent(card, { currency: 'eur' }));
    assert.equal(res.status, 204, 'a non-usd currency is accepted (it ends not_matched)');
  });

  it('refuses an event with a leap second or a date outside the window on its own, and stores its neighbours', async () => {
    const day = 86_400_000;
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['/createdAt', { createdAt: '2016-12-31T23:59:60Z' }, 'must match format "date-time"'],
      ['/settledAt', { settledAt: '2016-12-31T23:59:60Z' }, 'must match format "date-time"'],
      ['/createdAt', { createdAt: '2026-02-30T10:00:00Z' }, 'must match format "date-time"'],
      ['/createdAt', { createdAt: '0001-01-01T00:00:00Z' }, 'is more than 400 days ago'],
      ['/createdAt', { createdAt: '9999-12-31T23:59:59Z' }, 'is more than 1 day in the future'],
      ['/createdAt', { createdAt: new Date(Date.now() - 401 * day).toISOString() }, 'is more than 400 days ago'],
      ['/settledAt', { settledAt: new Date(Date.now() + 2 * day).toISOString() }, 'is more than 1 day in the future'],
    ];
    const good = [
      settledEvent(card),
      settledEvent(card, { createdAt: new Date(Date.now() - 399 * day).toISOString() }),
    ];
    const batch = [good[0], ...bad.map(([, patch]) => settledEvent(card, patch)), good[1]];
    const res = await issuer.call('POST', '/api/v1/incoming-txn', batch);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.map((f: any) => f.index),
      bad.map((_, i) => i + 1),
    );
    res.body.forEach((failure: any, i: number) => {
      const [path, , message] = bad[i];
      assert.equal(failure.error.reasonCode, 'invalid_event');
      assert.ok(
        failure.error.details.errors.some((e: any) => e.path === path && e.message === message),
        JSON.stringify(failure.error.details),
      );
    });
    const stored = await app.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id, externalId: { in: batch.map((e) => e.id) } },
    });
    assert.deepEqual(stored.map((e) => e.externalId).sort(), good.map((e) => e.id).sort());
  });

  it('refuses an event holding a NUL, a lone surrogate, a __proto__ key or deep nesting alone, storing its neighbours', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = { deep };
    const bad: Array<[string, Record<string, unknown>, string]> = [
      ['/merchantDescriptor', { merchantDescriptor: 'SQ *BLUE\u0000BOTTLE' }, 'contains a NUL character'],
      ['/merchantDescriptor', { merchantDescriptor: 'SQ *BLUE \ud800 BOTTLE' }, 'unpaired surrogate'],
      ['/metadata/\udc00', { metadata: { '\udc00': 1 } }, 'unpaired surrogate'],
      ['/__proto__', { ['__proto__']: { x: 1 } }, 'is a reserved key'],
      ['/extra', { extra: deep }, 'is nested too deeply'],
    ];
    for (const [path, patch, message] of bad) {
      const good = settledEvent(card);
      // JSON.parse keeps "__proto__" as an own key; an object literal would set the prototype.
      const badEvent = { ...settledEvent(card), ...(path === '/__proto__' ? {} : patch) };
      const raw =
        path === '/__proto__'
          ? JSON.stringify([good, badEvent]).replace(/}]$/, ',"__proto__":{"x":1}}]')
          : JSON.stringify([good, badEvent]);
      const res = await app.request('POST', '/api/v1/incoming-txn', { token: issuer.token, raw });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(res.body.length, 1);
      const [failure] = res.body;
      assert.deepEqual([failure.index, failure.id, failure.error.reasonCode], [1, badEvent.id, 'invalid_event']);
      assert.ok(
        failure.error.details.errors.some(
          (e: { path: string; message: string }) =>
            e.path.startsWith(path.split('/').slice(0, 2).join('/')) && e.message.includes(message),
        ),
        `${path}: ${JSON.stringify(failure.error.details)}`,
      );
      assert.ok(await stored('settled', good.id), 'the valid event is stored');
      assert.equal(await stored('settled', badEvent.id), null);
    }
  });

  it('answers a single event with a NUL as a batch of one: 400 with its failure at index 0', async () => {
    const event = settledEvent(card, { merchantDescriptor: 'A\u0000B' });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 400);
    assert.deepEqual([res.body[0].index, res.body[0].id, res.body[0].error.reasonCode], [0, event.id, 'invalid_event']);
    // Other routes still refuse such a body whole.
    assertError(
      await issuer.call('POST', '/api/v2/chg', groupBody({ settings: { displayName: 'a\u0000b' } })),
      400,
      'invalid_body',
    );
  });

  it('rejects an empty array, more than 1000 events and non-objects as a whole', async () => {
    assertError(await issuer.call('POST', '/api/v1/incoming-txn', []), 400, 'invalid_body');
    assertError(
      await issuer.call(
        'POST',
        '/api/v1/incoming-txn',
        Array.from({ length: 1001 }, () => settledEvent(card)),
      ),
      400,
      'invalid_body',
    );
    assertError(await issuer.call('POST', '/api/v1/incoming-txn', 'event'), 400, 'invalid_body');
    assertError(await app.request('POST', '/api/v1/incoming-txn', { token: issuer.token }), 400, 'invalid_body');
  });

  it('stores each event of a batch sent by 5 clients at once exactly once', async () => {
    const batch = Array.from({ length: 200 }, () => settledEvent(card));
    const results = await Promise.all(
      Array.from({ length: 5 }, () => issuer.call('POST', '/api/v1/incoming-txn', batch)),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      [204, 204, 204, 204, 204],
    );
    const rows = await app.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id, externalId: { in: batch.map((e) => e.id) } },
    });
    assert.equal(rows.length, 200);
    const ids = new Set(rows.map((r) => r.id));
    assert.equal(handedOver.filter((h) => ids.has(h.eventId)).length, 200, 'each handed over once');
  });

  it("treats another issuer's cardholders as unknown", async () => {
    const intruder = await newIssuer(app);
    const res = await intruder.call('POST', '/api/v1/incoming-txn', settledEvent(card));
    assert.equal(res.status, 400);
    assert.equal(res.body[0].error.reasonCode, 'unknown_cardholder');
    const byOurId = await intruder.call(
      'POST',
      '/api/v1/incoming-txn',
      settledEvent({ ...card, cardholderId: group.cardholders[0].id }),
    );
    assert.equal(byOurId.body[0].error.reasonCode, 'unknown_cardholder');
    assert.equal(
      await app.db.ingestedEvent.count({ where: { issuerId: intruder.id } }),
      0,
      'nothing stored for the intruder',
    );
  });
});
