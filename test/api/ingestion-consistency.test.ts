// Event data that disagrees with what the service knows is refused per event, never stored
// (docs/decisions/0016-ingestion-identity-and-consistency.md): card details
// that are not the resolved card's, a refund whose card is in another group than its
// purchase, and relatedTransactionId on a purchase. Neighbours in the batch are accepted.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { inlineRefs } from '../helpers/openapi-refs';
import { groupBody, uniq } from '../helpers/groups';
import { authEvent, cardOf, settledEvent, type CardRef } from '../helpers/events';
import type { HandoverItem } from '../../core/domain/handover';
import { fingerprint } from '../../api/ingestion/fingerprint';
import type { IngestedEvent } from '../../api/ingestion/schemas';

describe('ingestion: event data that disagrees with the card or the purchase', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let other: any;
  const handedOver: HandoverItem[] = [];
  before(async () => {
    app = await startTestApp({
      handover: { enqueue: (items) => handedOver.push(...items), drain: async () => undefined },
    });
    issuer = await newIssuer(app);
    group = (await issuer.call('POST', '/api/v2/chg', twoCardGroup())).body;
    card = cardOf(group);
    other = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
  });
  after(() => app.close());

  const stored = (kind: 'auth' | 'settled', externalId: string) =>
    app.db.ingestedEvent.findUnique({ where: { issuerId_kind_externalId: { issuerId: issuer.id, kind, externalId } } });
  const reasons = (body: any[]) => body.map((f) => [f.index, f.id, f.error.reasonCode]);
  const assertFailureShape = (f: any) =>
    assertError({ status: f.error.httpStatusCode, body: f.error, text: '', headers: new Headers() }, 400);

  describe('cardLast4 and network (card_details_mismatch)', () => {
    it("refuses an event whose cardLast4 or network is not the card's, naming the field and the card's value", async () => {
      const batch = [
        settledEvent(card),
        settledEvent(card, { cardLast4: '0000' }),
        settledEvent(card, { network: 'mastercard' }),
        settledEvent(card, { cardLast4: '5555', network: 'amex' }),
        settledEvent(card),
      ];
      const res = await issuer.call('POST', '/api/v1/incoming-txn', batch);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        reasons(res.body),
        [1, 2, 3].map((i) => [i, batch[i].id, 'card_details_mismatch']),
      );
      res.body.forEach(assertFailureShape);
      assert.deepEqual(res.body[0].error.details.errors, [
        { path: '/cardLast4', message: 'is 0000 but the card ends in 4242' },
      ]);
      assert.deepEqual(res.body[1].error.details.errors, [
        { path: '/network', message: 'is mastercard but the card is visa' },
      ]);
      assert.deepEqual(
        res.body[2].error.details.errors.map((e: any) => e.path),
        ['/cardLast4', '/network'],
      );
      assert.match(res.body[0].error.message, /cardLast4/);
      for (const i of [1, 2, 3]) assert.equal(await stored('settled', batch[i].id), null, `event ${i} is not stored`);
      for (const i of [0, 4]) assert.ok(await stored('settled', batch[i].id), `event ${i} is stored`);
      assert.equal(
        (await issuer.call('POST', '/api/v1/incoming-txn', [batch[0], batch[4]])).status,
        204,
        'the good events again are accepted',
      );
      const again = await issuer.call('POST', '/api/v1/incoming-txn', batch[1]);
      assert.deepEqual(
        [again.status, again.body[0].error.reasonCode],
        [400, 'card_details_mismatch'],
        'a refused event stays refused',
      );
    });

    it('compares with the card each event names: another card of the cardholder, our card_ id, authorizations', async () => {
      const second = cardOf(group, 0, 1);
      assert.equal(
        (await issuer.call('POST', '/api/v1/incoming-auth', authEvent(second, { network: 'mastercard' }))).status,
        204,
      );
      const wrong = await issuer.call('POST', '/api/v1/incoming-auth', authEvent(second, { cardLast4: '4242' }));
      assert.deepEqual([wrong.status, wrong.body[0].error.reasonCode], [400, 'card_details_mismatch']);
      assert.deepEqual(wrong.body[0].error.details.errors, [
        { path: '/cardLast4', message: 'is 4242 but the card ends in 5555' },
        { path: '/network', message: 'is visa but the card is mastercard' },
      ]);
      const ours = { cardholderId: group.cardholders[0].id, cardId: group.cardholders[0].cards[0].id, last4: '5555' };
      const byOurIds = await issuer.call('POST', '/api/v1/incoming-txn', settledEvent(ours));
      assert.deepEqual([byOurIds.status, byOurIds.body[0].error.reasonCode], [400, 'card_details_mismatch']);
    });

    it('answers a refused copy and a good copy of one id in one batch as a conflict, storing the good one', async () => {
      for (const order of ['refused first', 'good first']) {
        const good = settledEvent(card);
        const bad = { ...good, cardLast4: '0000' };
        const batch = order === 'refused first' ? [bad, good] : [good, bad];
        const res = await issuer.call('POST', '/api/v1/incoming-txn', batch);
        assert.equal(res.status, 200, res.text);
        assert.deepEqual(reasons(res.body), [[batch.indexOf(bad), good.id, 'id_conflict']], order);
        assert.equal(
          (await stored('settled', good.id))!.fingerprint,
          fingerprint('settled', good as IngestedEvent),
          order,
        );
      }
    });

    it('keeps answering an event stored before its card changed as the event it is (the stored event wins)', async () => {
      const body = groupBody();
      const own = (await issuer.call('POST', '/api/v2/chg', body)).body;
      const before = cardOf(own);
      const auth = authEvent(before);
      const purchase = settledEvent(before, { authorizationId: auth.id });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
      // The issuer reissues the card under the same id: new last four digits.
      const reissued = {
        ...body,
        cardholders: [{ ...body.cardholders[0], cards: [{ ...body.cardholders[0].cards[0], last4: '9999' }] }],
      };
      assert.equal((await issuer.call('POST', '/api/v2/chg', reissued)).status, 200);

      assert.equal(
        (await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status,
        204,
        'a retry of the stored purchase is accepted',
      );
      assert.equal(
        (await issuer.call('POST', '/api/v1/incoming-auth', { ...auth, state: 'reversed' })).status,
        204,
        'its authorization can be reversed',
      );
      assert.equal((await stored('auth', auth.id))!.state, 'reversed');
      const changed = await issuer.call('POST', '/api/v1/incoming-txn', { ...purchase, amount: purchase.amount + 1 });
      assert.equal(
        changed.body[0].error.reasonCode,
        'id_conflict',
        'other content under a stored id is still a conflict',
      );
      const late = await issuer.call('POST', '/api/v1/incoming-txn', settledEvent(before));
      assert.equal(
        late.body[0].error.reasonCode,
        'card_details_mismatch',
        'a new event with the old digits is refused',
      );
      assert.equal(
        (await issuer.call('POST', '/api/v1/incoming-txn', settledEvent({ ...before, last4: '9999' }))).status,
        204,
      );
    });
  });

  describe('a refund and its purchase in different groups (related_transaction_mismatch)', () => {
    it('refuses a refund whose card is in another group than its purchase, stored or in the same batch', async () => {
      const stranger = cardOf(other);
      const purchase = settledEvent(card);
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
      const inBatch = settledEvent(card);
      const batch = [
        settledEvent(stranger, { state: 'refunded', relatedTransactionId: purchase.id, amount: 100 }),
        inBatch,
        settledEvent(stranger, { state: 'refunded', relatedTransactionId: inBatch.id, amount: 100 }),
        settledEvent(card, { state: 'refunded', relatedTransactionId: purchase.id, amount: 100 }),
      ];
      const res = await issuer.call('POST', '/api/v1/incoming-txn', batch);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(reasons(res.body), [
        [0, batch[0].id, 'related_transaction_mismatch'],
        [2, batch[2].id, 'related_transaction_mismatch'],
      ]);
      res.body.forEach(assertFailureShape);
      assert.deepEqual(
        res.body[0].error.details.errors.map((e: any) => e.path),
        ['/relatedTransactionId'],
      );
      assert.doesNotMatch(
        JSON.stringify(res.body),
        new RegExp(`${group.id}|${other.id}`),
        'no group ids in the answer',
      );
      for (const i of [0, 2]) assert.equal(await stored('settled', batch[i].id), null);
      assert.equal((await stored('settled', batch[3].id))!.relatedEventId, (await stored('settled', purchase.id))!.id);
    });

    it("accepts a refund on another card of the purchase's group", async () => {
      const purchase = settledEvent(card);
      const refund = settledEvent(cardOf(group, 0, 1), {
        network: 'mastercard',
        state: 'refunded',
        relatedTransactionId: purchase.id,
        amount: 100,
      });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', [purchase, refund])).status, 204);
      assert.equal((await stored('settled', refund.id))!.chgId, group.id);
    });

    it("books the refund of a cardholder who has since moved to another group in the purchase's group", async () => {
      const body = groupBody();
      const first = (await issuer.call('POST', '/api/v2/chg', body)).body;
      const moving = cardOf(first);
      const purchase = settledEvent(moving);
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
      const removed = await issuer.call('DELETE', `/api/v2/chg/${first.id}/cardholder/${first.cardholders[0].id}`);
      assert.equal(removed.status, 200, removed.text);
      const newCard = { externalId: uniq('k'), last4: '7777', network: 'visa' };
      const moved = [{ ...body.cardholders[0], cards: [...body.cardholders[0].cards, newCard] }];
      const second = await issuer.call('POST', '/api/v2/chg', groupBody({ cardholders: moved }));
      assert.equal(second.status, 201, second.text);

      const refund = settledEvent(moving, { state: 'refunded', relatedTransactionId: purchase.id, amount: 100 });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', refund)).status, 204);
      const row = await stored('settled', refund.id);
      assert.deepEqual(
        [row!.chgId, row!.cardholderId, row!.cardId],
        [first.id, first.cardholders[0].id, first.cardholders[0].cards[0].id],
      );
      const onNewCard = settledEvent(
        { ...moving, cardId: newCard.externalId, last4: '7777' },
        { state: 'refunded', relatedTransactionId: purchase.id, amount: 100 },
      );
      const refused = await issuer.call('POST', '/api/v1/incoming-txn', onNewCard);
      assert.equal(
        refused.body[0].error.reasonCode,
        'related_transaction_mismatch',
        "a card the purchase's group never had",
      );
      const next = settledEvent(moving);
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', next)).status, 204);
      assert.equal((await stored('settled', next.id))!.chgId, second.body.id, "a new purchase is the new group's");
    });
  });

  describe('relatedTransactionId on a settled purchase', () => {
    it('refuses it as invalid_event naming the field, accepting the neighbours', async () => {
      const purchase = settledEvent(card);
      await issuer.call('POST', '/api/v1/incoming-txn', purchase);
      const batch = [settledEvent(card, { relatedTransactionId: purchase.id }), settledEvent(card)];
      const res = await issuer.call('POST', '/api/v1/incoming-txn', batch);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(reasons(res.body), [[0, batch[0].id, 'invalid_event']]);
      assert.deepEqual(res.body[0].error.details.errors, [
        { path: '/relatedTransactionId', message: 'is only allowed when state is refunded' },
      ]);
      assert.equal(await stored('settled', batch[0].id), null);
      assert.ok(await stored('settled', batch[1].id));
    });

    it('is documented in /openapi.json with every failure reason', async () => {
      const doc = (await app.request('GET', '/openapi.json')).body;
      const op = inlineRefs(doc, doc.paths['/api/v1/incoming-txn'].post);
      const settled = op.requestBody.content['application/json'].schema.oneOf[0];
      assert.deepEqual(settled.else, { properties: { relatedTransactionId: false } });
      for (const path of ['/api/v1/incoming-txn', '/api/v1/incoming-auth']) {
        const text = JSON.stringify(inlineRefs(doc, doc.paths[path].post));
        for (const reason of [
          'invalid_event',
          'card_details_mismatch',
          'related_transaction_mismatch',
          'unknown_related_transaction',
          'id_conflict',
        ]) {
          assert.ok(text.includes(reason), `${path} lists ${reason}`);
        }
      }
    });
  });
});

function twoCardGroup() {
  return groupBody({
    cardholders: [
      {
        externalId: uniq('c'),
        cards: [
          { externalId: uniq('k'), last4: '4242', network: 'visa' },
          { externalId: uniq('k'), last4: '5555', network: 'mastercard' },
        ],
      },
    ],
  });
}
