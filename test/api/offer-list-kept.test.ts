// A group's offer list read again sends the page kept from the same request's last read only while
// nothing it was made from moved (api/catalogue/kept-pages.ts, decision 0065): each change below
// shows on the very next read, and a read after it is kept again.
import assert from 'node:assert/strict';
import { assertError, newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { createGroup, createMerchant, createOffer, DAY_MS } from '../helpers/catalogue';
import { offerListPages } from '../../core/metrics';

describe('a group offer list read again (kept pages)', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  /** The API's clock, pinned: a kept page holds over a span of instants. */
  let now = new Date(Date.now() - (Date.now() % 1000));
  before(async () => {
    app = await startTestApp({ clock: { now: () => now } });
    issuer = await newIssuer(app);
  });
  after(() => app?.close());

  const at = (days: number) => new Date(now.getTime() + days * DAY_MS).toISOString();
  const sent = async () => {
    const values = (await offerListPages.get()).values;
    const of = (source: string) => values.find((v) => v.labels.source === source)?.value ?? 0;
    return { kept: of('kept'), made: of('made') };
  };
  /** The page as sent, and whether it was the kept one. */
  async function read(path: string): Promise<{ body: any; kept: boolean }> {
    const before = await sent();
    const res = await issuer.call('GET', path);
    assert.equal(res.status, 200, res.text);
    const after = await sent();
    assert.equal(after.kept + after.made - before.kept - before.made, 1);
    return { body: res.body, kept: after.kept > before.kept };
  }
  const shown = (body: any) => body.data.map((o: any) => [o.id, o.status, o.activated, o.progress?.current ?? null]);

  for (const sort of ['starts_at', 'relevance'] as const) {
    it(`shows every change at once (sort=${sort}): activation, progress, history, enrolment, catalogue, instant`, async () => {
      const chgId = await createGroup(issuer);
      const shop = await createMerchant(app);
      const live = await createOffer(app, shop.id, { startsAt: at(-2) });
      const soon = await createOffer(app, shop.id, { startsAt: at(1) });
      const cumulative = await createOffer(app, shop.id, {
        startsAt: at(-1),
        reward: {
          kind: 'spend_x_get_y',
          spendMinor: 10_000,
          rewardMinor: 1_000,
          balanceType: 'cashback',
          repeatable: false,
        },
      });
      // Targeted, not live yet: the group has no enrolment in it and is not shown it.
      const targeted = await createOffer(app, shop.id, { startsAt: at(5), audience: { segments: ['vip'] } });
      const path = `/api/v2/chg/${chgId}/merchant/${shop.id}/offers?sort=${sort}`;
      // `kept` undefined: either may be right (another test's offer may start or end meanwhile).
      const expectRead = async (kept: boolean | undefined, rows: unknown[][]) => {
        const page = await read(path);
        if (kept !== undefined) assert.equal(page.kept, kept, kept ? 'sent as kept' : 'made afresh');
        assert.deepEqual(shown(page.body).sort(), rows.sort());
        return page.body;
      };
      const rows = [
        [live.id, 'active', false, null],
        [soon.id, 'scheduled', false, null],
        [cumulative.id, 'active', false, 0],
      ];
      await expectRead(false, rows);
      const first = await expectRead(true, rows);

      // The group activates the merchant.
      assert.equal((await issuer.call('PUT', `/api/v2/chg/${chgId}/merchant/${shop.id}/activation`)).status, 201);
      rows.forEach((r) => (r[2] = true));
      await expectRead(false, rows);
      await expectRead(true, rows);

      // A settlement moves the group's progress and its history (written as the settlement writes them).
      await app.db.offerProgress.create({
        data: { offerId: cumulative.id, chgId, issuerId: issuer.id, measure: 2_500n, rewarded: 0 },
      });
      rows[2][3] = 2_500;
      await expectRead(false, rows);
      await app.db.chgMerchantHistory.create({
        data: {
          chgId,
          merchantId: shop.id,
          issuerId: issuer.id,
          purchases: 1,
          spendMinor: 2_500n,
          lastPurchaseAt: now,
        },
      });
      const afterHistory = await expectRead(sort === 'starts_at', rows);
      if (sort === 'relevance')
        assert.notDeepEqual(
          afterHistory.data.map((o: any) => o.relevance),
          first.data.map((o: any) => o.relevance),
          'ranked by the purchase',
        );
      await expectRead(true, rows);

      // The group is enrolled (treated) in the targeted offer: it is shown at once.
      await app.db.offerEnrolment.create({
        data: {
          offerId: targeted.id,
          chgId,
          issuerId: issuer.id,
          inAudience: true,
          arm: 'treated',
          enteredAt: now,
          detail: 'test',
        },
      });
      rows.push([targeted.id, 'scheduled', true, null]);
      await expectRead(false, rows);
      await expectRead(true, rows);

      // The catalogue moves: a new offer.
      const added = await createOffer(app, shop.id, { startsAt: at(-3) });
      rows.push([added.id, 'active', true, null]);
      await expectRead(false, rows);
      await expectRead(true, rows);

      // Time passes to the next offer's start: its status moves then. A page holds until the next
      // start or end of any offer of the issuer's catalogue, whose other offers (other tests')
      // may start or end before it.
      now = new Date(Date.parse(soon.startsAt) - 1);
      await expectRead(undefined, rows);
      now = new Date(soon.startsAt);
      rows[1][1] = 'active';
      await expectRead(false, rows);
      await expectRead(true, rows);

      // Another whole day since the purchase: a ranked page is ranked again.
      now = new Date(now.getTime() + DAY_MS);
      await expectRead(sort === 'relevance' ? false : undefined, rows);
      await expectRead(true, rows);
    });
  }

  it("answers another issuer's group 404 even when its page is kept", async () => {
    const chgId = await createGroup(issuer);
    const path = `/api/v2/chg/${chgId}/offers`;
    await read(path);
    assert.equal((await read(path)).kept, true);
    const other = await newIssuer(app);
    assertError(await other.call('GET', path), 404);
  });
});
