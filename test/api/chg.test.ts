import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody, uniq } from '../helpers/groups';

describe('cardholder group routes', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
  });
  after(() => app.close());

  describe('POST /api/v2/chg', () => {
    it('creates a group (201) and reads back every field', async () => {
      const body = groupBody({
        cardholders: [
          {
            externalId: uniq('c'),
            cards: [
              { externalId: uniq('k'), last4: '0001', network: 'visa' },
              { externalId: uniq('k'), last4: '0002', network: 'amex' },
            ],
          },
          {
            externalId: uniq('c'),
            status: 'inactive',
            cards: [{ externalId: uniq('k'), last4: '0003', network: 'mastercard' }],
          },
        ],
      });
      const created = await issuer.call('POST', '/api/v2/chg', body);
      assert.equal(created.status, 201);
      const read = await issuer.call('GET', `/api/v2/chg/${created.body.id}`);
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, created.body);
      const group = read.body;
      assert.match(group.id, /^chg_[0-9a-f-]{36}$/);
      assert.equal(group.externalId, body.externalId);
      assert.equal(group.status, 'active');
      assert.deepEqual(group.settings, body.settings);
      assert.equal(group.deactivatedAt, null);
      assert.ok(Date.parse(group.createdAt) > 0 && group.createdAt.endsWith('Z'));
      assert.equal(group.cardholders.length, 2);
      const [first, second] = group.cardholders;
      assert.match(first.id, /^ch_/);
      assert.equal(first.externalId, body.cardholders[0].externalId);
      assert.equal(first.status, 'active');
      assert.deepEqual(
        first.cards.map((c: any) => [c.externalId, c.last4, c.network, c.status, c.deactivatedAt]),
        body.cardholders[0].cards.map((c: any) => [c.externalId, c.last4, c.network, 'active', null]),
      );
      assert.match(first.cards[0].id, /^card_/);
      assert.equal(second.status, 'inactive');
      assert.ok(second.deactivatedAt);
      assert.equal(second.cards[0].status, 'inactive', 'cards of an inactive cardholder are inactive');
    });

    it("keeps a card's BIN when given, clears it when a later write leaves it out, refuses any other length", async () => {
      const card = { externalId: uniq('k'), last4: '1111', network: 'visa' };
      const [external, holder] = [uniq('household'), uniq('c')];
      const body = (bin?: string) =>
        groupBody({
          externalId: external,
          cardholders: [{ externalId: holder, cards: [{ ...card, ...(bin ? { bin } : {}) }] }],
        });
      const bins = (res: any) => res.body.cardholders[0].cards.map((c: any) => c.bin);
      assert.deepEqual(bins(await issuer.call('POST', '/api/v2/chg', body('411111'))), ['411111']);
      assert.deepEqual(bins(await issuer.call('POST', '/api/v2/chg', body('41111111'))), ['41111111']);
      assert.deepEqual(bins(await issuer.call('POST', '/api/v2/chg', body())), [null]);
      for (const bad of ['41111', '4111111', '411111111', '41111a'])
        assertError(await issuer.call('POST', '/api/v2/chg', body(bad)), 400, 'invalid_body');
    });

    it('updates the same externalId (200) keeping every assigned id', async () => {
      const body = groupBody();
      const created = await issuer.call('POST', '/api/v2/chg', body);
      const updated = await issuer.call('POST', '/api/v2/chg', { ...body, settings: { displayName: 'Renamed' } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.id, created.body.id);
      assert.equal(updated.body.cardholders[0].id, created.body.cardholders[0].id);
      assert.equal(updated.body.cardholders[0].cards[0].id, created.body.cardholders[0].cards[0].id);
      assert.deepEqual(updated.body.settings, { displayName: 'Renamed' });
      assert.equal(updated.body.createdAt, created.body.createdAt);
    });

    it('soft-deactivates cardholders and cards missing from the body, and re-activates them', async () => {
      const keep = {
        externalId: uniq('c'),
        cards: [
          { externalId: uniq('k'), last4: '1111', network: 'visa' },
          { externalId: uniq('k'), last4: '2222', network: 'visa' },
        ],
      };
      const drop = { externalId: uniq('c'), cards: [{ externalId: uniq('k'), last4: '3333', network: 'discover' }] };
      const body = groupBody({ cardholders: [keep, drop] });
      const created = await issuer.call('POST', '/api/v2/chg', body);
      const synced = await issuer.call('POST', '/api/v2/chg', {
        ...body,
        cardholders: [{ ...keep, cards: [keep.cards[0]] }],
      });
      assert.equal(synced.status, 200);
      const byExt = new Map(synced.body.cardholders.map((c: any) => [c.externalId, c]));
      const kept: any = byExt.get(keep.externalId);
      const dropped: any = byExt.get(drop.externalId);
      assert.equal(synced.body.cardholders.length, 2, 'deactivated cardholders stay readable');
      assert.equal(kept.status, 'active');
      assert.deepEqual(
        kept.cards.map((c: any) => c.status),
        ['active', 'inactive'],
      );
      assert.equal(dropped.status, 'inactive');
      assert.ok(dropped.deactivatedAt);
      assert.equal(dropped.cards[0].status, 'inactive');
      assert.equal(dropped.id, created.body.cardholders[1].id);

      const restored = await issuer.call('POST', '/api/v2/chg', body);
      assert.deepEqual(
        restored.body.cardholders.map((c: any) => [c.id, c.status, c.deactivatedAt]),
        created.body.cardholders.map((c: any) => [c.id, 'active', null]),
      );
      assert.deepEqual(
        restored.body.cardholders[0].cards.map((c: any) => c.status),
        ['active', 'active'],
      );
    });

    it('deactivates everything with status inactive, keeping the record readable', async () => {
      const body = groupBody();
      await issuer.call('POST', '/api/v2/chg', body);
      const res = await issuer.call('POST', '/api/v2/chg', { ...body, status: 'inactive' });
      assert.equal(res.status, 200);
      assert.equal(res.body.status, 'inactive');
      assert.ok(res.body.deactivatedAt);
      assert.equal(res.body.cardholders[0].status, 'inactive');
      assert.equal(res.body.cardholders[0].cards[0].status, 'inactive');
    });

    it('answers 409 external_id_conflict for a cardholder or card id active in another group', async () => {
      const first = groupBody();
      await issuer.call('POST', '/api/v2/chg', first);
      const stealCardholder = groupBody({
        cardholders: [
          {
            externalId: first.cardholders[0].externalId,
            cards: [{ externalId: uniq('k'), last4: '1234', network: 'visa' }],
          },
        ],
      });
      const res = await issuer.call('POST', '/api/v2/chg', stealCardholder);
      assertError(res, 409, 'external_id_conflict');
      assert.deepEqual(res.body.details.cardholderExternalIds, [first.cardholders[0].externalId]);
      const stealCard = groupBody({ cardholders: [{ externalId: uniq('c'), cards: [first.cardholders[0].cards[0]] }] });
      assertError(await issuer.call('POST', '/api/v2/chg', stealCard), 409, 'external_id_conflict');
      const lookup = await issuer.call('GET', '/api/v2/chg/' + 'chg_00000000-0000-0000-0000-000000000000');
      assert.equal(lookup.status, 404);
    });

    it('lets another group take a cardholder id once its old group released it', async () => {
      const first = groupBody();
      const created = await issuer.call('POST', '/api/v2/chg', first);
      await issuer.call('DELETE', `/api/v2/chg/${created.body.id}`);
      const second = groupBody({ cardholders: first.cardholders });
      const res = await issuer.call('POST', '/api/v2/chg', second);
      assert.equal(res.status, 201);
      assert.notEqual(res.body.cardholders[0].id, created.body.cardholders[0].id);
    });

    it('lets two issuers use the same external ids independently', async () => {
      const other = await newIssuer(app);
      const body = groupBody();
      const mine = await issuer.call('POST', '/api/v2/chg', body);
      const theirs = await other.call('POST', '/api/v2/chg', body);
      assert.equal(mine.status, 201);
      assert.equal(theirs.status, 201);
      assert.notEqual(mine.body.id, theirs.body.id);
    });

    it('serializes concurrent upserts of one group into one record', async () => {
      const body = groupBody();
      const results = await Promise.all(Array.from({ length: 8 }, () => issuer.call('POST', '/api/v2/chg', body)));
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
      assert.equal(new Set(results.map((r) => r.body.id)).size, 1);
      assert.equal(
        await app.db.cardholder.count({ where: { issuerId: issuer.id, externalId: body.cardholders[0].externalId } }),
        1,
      );
    });
  });

  describe('segments', () => {
    it('stores the segments sent, replaces them on each upsert, and empties them when omitted', async () => {
      const body = groupBody({ segments: ['premium', 'student'] });
      const created = await issuer.call('POST', '/api/v2/chg', body);
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.body.segments, ['premium', 'student']);
      const replaced = await issuer.call('POST', '/api/v2/chg', { ...body, segments: ['lapsed_2025'] });
      assert.equal(replaced.status, 200, replaced.text);
      assert.deepEqual(replaced.body.segments, ['lapsed_2025']);
      // undefined is left out of the JSON body.
      const emptied = await issuer.call('POST', '/api/v2/chg', { ...body, segments: undefined });
      assert.deepEqual(emptied.body.segments, [], 'the body is the whole desired state, as its cardholders are');
      assert.deepEqual((await issuer.call('GET', `/api/v2/chg/${created.body.id}`)).body.segments, []);
    });

    it('answers 400 naming the field for a bad segment, a repeated one, or more than 20, and stores nothing', async () => {
      const cases: Array<[unknown, string]> = [
        [['Premium'], '/segments/0'],
        [['a'.repeat(41)], '/segments/0'],
        [['ok', 'has space'], '/segments/1'],
        [['dup', 'dup'], '/segments'],
        [Array.from({ length: 21 }, (_, i) => `s${i}`), '/segments'],
        ['premium', '/segments'],
      ];
      for (const [segments, path] of cases) {
        const body = groupBody({ segments });
        const res = await issuer.call('POST', '/api/v2/chg', body);
        assertError(res, 400, 'invalid_body');
        assert.ok(
          res.body.details.errors.some((e: any) => e.path === path),
          `${JSON.stringify(segments)}: ${JSON.stringify(res.body.details.errors)}`,
        );
        const stored = await app.db.cardholderGroup.count({
          where: { issuerId: issuer.id, externalId: body.externalId },
        });
        assert.equal(stored, 0);
      }
      const twenty = Array.from({ length: 20 }, (_, i) => `s${i}`);
      assert.deepEqual(
        (await issuer.call('POST', '/api/v2/chg', groupBody({ segments: twenty }))).body.segments,
        twenty,
      );
    });

    it('syncs segments in a bulk upsert, failing only the item with a bad one', async () => {
      const good = groupBody({ segments: ['student'] });
      const res = await issuer.call('POST', '/api/v2/chg/bulk-upsert', {
        items: [good, groupBody({ segments: ['NOT OK'] })],
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.results.map((r: any) => r.status),
        ['created', 'failed'],
      );
      assert.equal(res.body.results[1].error.details.errors[0].path, '/items/1/segments/0');
      assert.deepEqual((await issuer.call('GET', `/api/v2/chg/${res.body.results[0].id}`)).body.segments, ['student']);
    });
  });

  describe('POST /api/v2/chg/bulk-upsert', () => {
    it('stores valid items and reports invalid ones (200)', async () => {
      const good = [groupBody(), groupBody()];
      const res = await issuer.call('POST', '/api/v2/chg/bulk-upsert', {
        items: [good[0], { externalId: 'x', cardholders: [] }, good[1], { ...groupBody(), extra: true }],
      });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.results.map((r: any) => [r.index, r.status]),
        [
          [0, 'created'],
          [1, 'failed'],
          [2, 'created'],
          [3, 'failed'],
        ],
      );
      assert.equal(res.body.results[1].error.reasonCode, 'invalid_body');
      assert.equal(res.body.results[1].error.details.errors[0].path, '/items/1/cardholders');
      assert.equal(res.body.results[3].error.details.errors[0].path, '/items/3/extra');
      for (const r of [res.body.results[0], res.body.results[2]]) {
        assert.equal((await issuer.call('GET', `/api/v2/chg/${r.id}`)).status, 200);
      }
      const again = await issuer.call('POST', '/api/v2/chg/bulk-upsert', { items: good });
      assert.deepEqual(
        again.body.results.map((r: any) => r.status),
        ['updated', 'updated'],
      );
    });

    it('fails only the item that conflicts in the database, keeps its neighbours, and stores nothing of it', async () => {
      const first = groupBody();
      // Item 1 reuses item 0's cardholder: the conflict appears only when item 1 is written.
      const clash = groupBody({
        cardholders: [
          first.cardholders[0],
          { externalId: uniq('c'), cards: [{ externalId: uniq('k'), last4: '7777', network: 'visa' }] },
        ],
      });
      const last = groupBody();
      const res = await issuer.call('POST', '/api/v2/chg/bulk-upsert', { items: [first, clash, last] });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        res.body.results.map((r: any) => [r.index, r.status]),
        [
          [0, 'created'],
          [1, 'failed'],
          [2, 'created'],
        ],
      );
      assert.equal(res.body.results[1].error.reasonCode, 'external_id_conflict');
      for (const r of [res.body.results[0], res.body.results[2]])
        assert.equal((await issuer.call('GET', `/api/v2/chg/${r.id}`)).status, 200);
      // The failed item's transaction rolled back whole: neither its group nor its other cardholder exists.
      assert.equal(
        await app.db.cardholderGroup.count({ where: { issuerId: issuer.id, externalId: clash.externalId } }),
        0,
      );
      assert.equal(await app.db.cardholder.count({ where: { externalId: clash.cardholders[1].externalId } }), 0);
      assert.equal(await app.db.cardholder.count({ where: { externalId: first.cardholders[0].externalId } }), 1);
    });

    it('answers 400 with per-item results when every item fails', async () => {
      const taken = groupBody();
      await issuer.call('POST', '/api/v2/chg', taken);
      const res = await issuer.call('POST', '/api/v2/chg/bulk-upsert', {
        items: [{ externalId: 'a' }, groupBody({ cardholders: taken.cardholders })],
      });
      assert.equal(res.status, 400);
      assert.deepEqual(
        res.body.results.map((r: any) => r.status),
        ['failed', 'failed'],
      );
      assert.equal(res.body.results[1].error.reasonCode, 'external_id_conflict');
    });
  });

  describe('soft deactivation routes', () => {
    it('deactivates a card, a cardholder and a group while keeping all readable', async () => {
      const body = groupBody({
        cardholders: [
          {
            externalId: uniq('c'),
            cards: [
              { externalId: uniq('k'), last4: '1000', network: 'visa' },
              { externalId: uniq('k'), last4: '2000', network: 'visa' },
            ],
          },
          { externalId: uniq('c'), cards: [{ externalId: uniq('k'), last4: '3000', network: 'visa' }] },
        ],
      });
      const group = (await issuer.call('POST', '/api/v2/chg', body)).body;
      const [ch1, ch2] = group.cardholders;

      const afterCard = await issuer.call(
        'DELETE',
        `/api/v2/chg/${group.id}/cardholder/${ch1.id}/card/${ch1.cards[1].id}`,
      );
      assert.equal(afterCard.status, 200);
      assert.deepEqual(
        afterCard.body.cardholders[0].cards.map((c: any) => c.status),
        ['active', 'inactive'],
      );

      const afterCardholder = await issuer.call('DELETE', `/api/v2/chg/${group.id}/cardholder/${ch2.id}`);
      assert.equal(afterCardholder.body.cardholders[1].status, 'inactive');
      assert.equal(afterCardholder.body.cardholders[1].cards[0].status, 'inactive');
      assert.equal(afterCardholder.body.status, 'active');

      const afterGroup = await issuer.call('DELETE', `/api/v2/chg/${group.id}`);
      assert.equal(afterGroup.status, 200);
      assert.equal(afterGroup.body.status, 'inactive');
      assert.ok(afterGroup.body.deactivatedAt);
      assert.ok(
        afterGroup.body.cardholders.every(
          (c: any) => c.status === 'inactive' && c.cards.every((k: any) => k.status === 'inactive'),
        ),
      );

      const read = await issuer.call('GET', `/api/v2/chg/${group.id}`);
      assert.equal(read.status, 200);
      assert.deepEqual(read.body, afterGroup.body);
      const again = await issuer.call('DELETE', `/api/v2/chg/${group.id}`);
      assert.equal(again.status, 200, 'deactivating twice is harmless');
      assert.equal(again.body.deactivatedAt, afterGroup.body.deactivatedAt);
    });

    it('answers 404 for a cardholder or card of another group', async () => {
      const a = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
      const b = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
      assertError(
        await issuer.call('DELETE', `/api/v2/chg/${a.id}/cardholder/${b.cardholders[0].id}`),
        404,
        'cardholder_not_found',
      );
      assertError(
        await issuer.call(
          'DELETE',
          `/api/v2/chg/${a.id}/cardholder/${a.cardholders[0].id}/card/${b.cardholders[0].cards[0].id}`,
        ),
        404,
        'card_not_found',
      );
    });
  });
});
