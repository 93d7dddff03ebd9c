import assert from 'node:assert/strict';
import { startTestApp, newIssuer, assertError, type TestApp, type TestIssuer } from '../helpers/app';
import { createGroup, createMerchant, createOffer, daysFromNow, walkPages } from '../helpers/catalogue';
import { uniq } from '../helpers/groups';
import { poolOf } from '../../prisma/client';

describe('issuer catalogue routes', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let other: TestIssuer;
  let chgId: string;
  let tag: string;
  let merchants: any[];
  let hidden: any;
  before(async () => {
    app = await startTestApp();
    [issuer, other] = [await newIssuer(app), await newIssuer(app)];
    chgId = await createGroup(issuer);
    tag = uniq('Cat').replace('-', '');
    merchants = [];
    for (let i = 0; i < 7; i++) {
      merchants.push(
        await createMerchant(app, {
          name: `${tag} ${String.fromCharCode(71 - i)} shop`,
          category: i % 2 ? 'fuel' : 'dining',
          brandedBalance: { enabled: true, spendMinimumMinor: 500, availabilityDelayDays: 3, expiryDays: 365 },
        }),
      );
    }
    hidden = await createMerchant(app, { name: `${tag} hidden`, issuerIds: [other.id] });
  });
  after(() => app.close());

  const base = () => `/api/v2/chg/${chgId}`;

  it('lists merchants by name across pages without duplicates or gaps', async () => {
    const all = await walkPages(issuer, `${base()}/merchants?q=${tag}`, 2);
    assert.deepEqual(
      all.map((m) => m.id),
      [...merchants].reverse().map((m) => m.id),
    );
    assert.deepEqual(all[0].activation, { status: 'not_activated', activatedAt: null, presentedOfferId: null });
    assert.deepEqual(all[0].brandedBalance, {
      enabled: true,
      spendMinimumMinor: 500,
      availabilityDelayDays: 3,
      expiryDays: 365,
    });
  });

  it('pages merchants without duplicates or gaps while merchants are added between pages', async () => {
    const live = uniq('Live').replace('-', '');
    const originals: any[] = [];
    for (const letter of ['B', 'D', 'F', 'H', 'J'])
      originals.push(await createMerchant(app, { name: `${live} ${letter}` }));
    const seen: string[] = [];
    let cursor: string | null = null;
    const inserted: string[] = [];
    for (let page = 0; page < 20; page++) {
      const res: any = await issuer.call(
        'GET',
        `${base()}/merchants?q=${live}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      assert.equal(res.status, 200, res.text);
      seen.push(...res.body.data.map((m: any) => m.id));
      cursor = res.body.nextCursor;
      if (!cursor) break;
      // Before, between and after what was served so far.
      for (const letter of [`A${page}`, `E${page}`, `Z${page}`])
        inserted.push((await createMerchant(app, { name: `${live} ${letter}` })).id);
    }
    assert.equal(new Set(seen).size, seen.length, 'no merchant served twice');
    for (const m of originals) assert.ok(seen.includes(m.id), `${m.name} was skipped`);
    // Only merchants sorting after the cursor can join the walk; every one served is real.
    assert.ok(seen.every((id) => originals.some((m) => m.id === id) || inserted.includes(id)));
  });

  it('filters merchants by category, q, activated and status', async () => {
    const fuel = await walkPages(issuer, `${base()}/merchants?q=${tag}&category=fuel`, 50);
    assert.equal(fuel.length, 3);
    assert.ok(fuel.every((m) => m.category === 'fuel'));
    const one = await issuer.call('GET', `${base()}/merchants?q=${encodeURIComponent(`${tag} c SHOP`.toLowerCase())}`);
    assert.deepEqual(
      one.body.data.map((m: any) => m.id),
      [merchants[4].id],
    );
    assert.equal((await issuer.call('PUT', `${base()}/merchant/${merchants[0].id}/activation`, {})).status, 201);
    const activated = await walkPages(issuer, `${base()}/merchants?q=${tag}&activated=true`, 50);
    assert.deepEqual(
      activated.map((m) => m.id),
      [merchants[0].id],
    );
    assert.equal(activated[0].activation.status, 'active');
    const notActivated = await walkPages(issuer, `${base()}/merchants?q=${tag}&activated=false`, 50);
    assert.equal(notActivated.length, 6);
    await app.operator('PATCH', `/admin/v1/merchants/${merchants[6].id}`, { status: 'inactive' });
    const inactive = await walkPages(issuer, `${base()}/merchants?q=${tag}&status=inactive`, 50);
    assert.deepEqual(
      inactive.map((m) => m.id),
      [merchants[6].id],
    );
    assert.equal((await walkPages(issuer, `${base()}/merchants?q=${tag}`, 50)).length, 6);
  });

  it('hides merchants restricted to other issuers, as if missing', async () => {
    assert.equal((await walkPages(issuer, `${base()}/merchants?q=${tag}%20hidden`, 50)).length, 0);
    assertError(await issuer.call('GET', `${base()}/merchant/${hidden.id}`), 404, 'merchant_not_found');
    const otherChg = await createGroup(other);
    const seen = await other.call('GET', `/api/v2/chg/${otherChg}/merchant/${hidden.id}`);
    assert.equal(seen.status, 200, seen.text);
  });

  it('reads one merchant and answers 404/400 for unknown, foreign and malformed ids', async () => {
    const res = await issuer.call('GET', `${base()}/merchant/${merchants[1].id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.name, merchants[1].name);
    assertError(await issuer.call('GET', `${base()}/merchant/mp_${crypto.randomUUID()}`), 404, 'merchant_not_found');
    assertError(await issuer.call('GET', `/api/v2/chg/chg_${crypto.randomUUID()}/merchants`), 404, 'chg_not_found');
    assertError(await other.call('GET', `${base()}/merchants`), 404, 'chg_not_found');
    assertError(await other.call('GET', `${base()}/merchant/${merchants[1].id}`), 404, 'chg_not_found');
    assertError(await issuer.call('GET', `${base()}/merchant/MP_123`), 400, 'invalid_id');
    assertError(await issuer.call('GET', `/api/v2/chg/chg_x/merchants`), 400, 'invalid_id');
    assertError(await issuer.call('GET', `${base()}/merchants?limit=0`), 400, 'invalid_query');
    assertError(await issuer.call('GET', `${base()}/merchants?cursor=garbage`), 400, 'invalid_query');
  });

  describe('offers', () => {
    let merchant: any;
    let offers: Record<string, any>;
    before(async () => {
      merchant = await createMerchant(app, {
        brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
      });
      offers = {
        cashback: await createOffer(app, merchant.id, { startsAt: daysFromNow(-5) }),
        branded: await createOffer(app, merchant.id, {
          cashbackRateBps: 0,
          brandedRateBps: 300,
          startsAt: daysFromNow(-4),
        }),
        both: await createOffer(app, merchant.id, {
          cashbackRateBps: 100,
          brandedRateBps: 100,
          startsAt: daysFromNow(-3),
        }),
        scheduled: await createOffer(app, merchant.id, { startsAt: daysFromNow(5) }),
        ended: await createOffer(app, merchant.id, { startsAt: daysFromNow(-9), endsAt: daysFromNow(-1) }),
      };
    });
    const ids = (list: any[]) => list.map((o) => o.id);

    it('lists offers by startsAt across pages, on both list routes', async () => {
      const expected = [offers.ended, offers.cashback, offers.branded, offers.both, offers.scheduled].map((o) => o.id);
      assert.deepEqual(ids(await walkPages(issuer, `${base()}/offers?merchantId=${merchant.id}`, 2)), expected);
      assert.deepEqual(ids(await walkPages(issuer, `${base()}/merchant/${merchant.id}/offers`, 1)), expected);
      const all = await walkPages(issuer, `${base()}/offers`, 200);
      assert.equal(new Set(ids(all)).size, all.length);
      assert.ok(expected.every((id) => ids(all).includes(id)));
    });

    it('filters offers by status and type', async () => {
      const path = `${base()}/merchant/${merchant.id}/offers`;
      assert.deepEqual(ids(await walkPages(issuer, `${path}?status=scheduled`, 50)), [offers.scheduled.id]);
      assert.deepEqual(ids(await walkPages(issuer, `${path}?status=ended`, 50)), [offers.ended.id]);
      assert.deepEqual(ids(await walkPages(issuer, `${path}?status=active`, 50)), [
        offers.cashback.id,
        offers.branded.id,
        offers.both.id,
      ]);
      assert.deepEqual(ids(await walkPages(issuer, `${path}?type=branded`, 50)), [offers.branded.id, offers.both.id]);
      assert.deepEqual(
        ids(await walkPages(issuer, `${base()}/offers?merchantId=${merchant.id}&type=cashback&status=active`, 50)),
        [offers.cashback.id, offers.both.id],
      );
      assertError(await issuer.call('GET', `${path}?status=paused`), 400, 'invalid_query');
      assertError(await issuer.call('GET', `${base()}/offers?merchantId=nope`), 400, 'invalid_query');
    });

    it('shows a change to the catalogue in the next list, whoever made it, and never before it commits', async () => {
      const shop = await createMerchant(app);
      const offer = await createOffer(app, shop.id, { title: 'Before' });
      const path = `${base()}/merchant/${shop.id}/offers`;
      const titles = async () => (await walkPages(issuer, path, 50)).map((o) => o.title);
      assert.deepEqual(await titles(), ['Before']);
      // Another process's writer, straight into the database: the API holds the issuer's offers
      // in memory, and must read them again.
      await app.db.$transaction(async (tx) => {
        await tx.$executeRaw`UPDATE offer SET title = 'After' WHERE id = ${offer.id}`;
        await tx.$executeRaw`UPDATE merchant SET status = 'inactive' WHERE id = ${shop.id}`;
        // Uncommitted: the list answers from the catalogue as committed.
        assert.deepEqual(await titles(), ['Before']);
      });
      const listed = await walkPages(issuer, path, 50);
      assert.deepEqual(
        listed.map((o) => [o.title, o.status]),
        [['After', 'ended']],
      );
      const created = await createOffer(app, shop.id, { title: 'Later', startsAt: daysFromNow(-1) });
      assert.deepEqual(ids(await walkPages(issuer, path, 50)), [offer.id, created.id]);
    });

    it('pages past any number of targeted offers the group is not shown', async () => {
      const shop = await createMerchant(app);
      // The group carries no segment: outside each audience, never shown, enrolled when first met.
      for (let i = 0; i < 40; i++)
        await createOffer(app, shop.id, { startsAt: daysFromNow(-3), audience: { segments: ['vip'] } });
      const shown = [];
      for (let i = 0; i < 3; i++) shown.push((await createOffer(app, shop.id, { startsAt: daysFromNow(-2) })).id);
      const path = `${base()}/merchant/${shop.id}/offers`;
      assert.deepEqual(ids(await walkPages(issuer, path, 2)), shown);
      assert.equal(await app.db.offerEnrolment.count({ where: { chgId, offer: { merchantId: shop.id } } }), 40);
    });

    it("asks for a group's enrolment in an offer once: a list read again asks only for offers it has not read", async () => {
      const group = await createGroup(issuer);
      const shop = await createMerchant(app);
      // Outside each audience (the group carries no segment): enrolled when first met, never shown.
      const hiddenIds = [];
      for (let i = 0; i < 3; i++)
        hiddenIds.push(
          (await createOffer(app, shop.id, { startsAt: daysFromNow(-3), audience: { segments: ['vip'] } })).id,
        );
      const shown = (await createOffer(app, shop.id, { startsAt: daysFromNow(-2) })).id;
      const path = `/api/v2/chg/${group}/merchant/${shop.id}/offers`;
      // Any list the process reads takes up the catalogue's newest version: then the next starts from it.
      const quiet = await createMerchant(app);
      const catalogueTakenUp = async () =>
        assert.equal((await issuer.call('GET', `/api/v2/chg/${group}/merchant/${quiet.id}/offers`)).status, 200);
      const read = async (query = '') => {
        const asked = await statementsDuring(app, async () => {
          const res = await issuer.call('GET', `${path}${query}`);
          assert.equal(res.status, 200, res.text);
          assert.deepEqual(ids(res.body.data), [shown]);
        });
        return asked.filter((s) => s.name.startsWith('group_'));
      };
      await catalogueTakenUp();
      // First read: the three asked for, none enrolled yet; enrolled, then asked for again.
      const first = await read();
      assert.deepEqual(
        first.map((s) => [s.name, [...(s.values?.[2] as string[])].sort()]),
        [
          ['group_offer_view_v3', [...hiddenIds].sort()],
          ['group_offer_view_v3', [...hiddenIds].sort()],
        ],
      );
      // Read again, in any order: no enrolment asked for.
      assert.deepEqual(
        (await read()).map((s) => s.name),
        ['group_own_view_v1'],
      );
      assert.deepEqual(
        (await read('?sort=relevance')).map((s) => s.name),
        ['group_ranked_view_v4'],
      );
      assert.deepEqual(
        (await read('?sort=relevance')).map((s) => s.name),
        ['group_ranked_own_view_v1'],
      );
      // A new targeted offer: only its enrolment is asked for (twice: before and after it is decided).
      const added = (await createOffer(app, shop.id, { startsAt: daysFromNow(-1), audience: { segments: ['vip'] } }))
        .id;
      await catalogueTakenUp();
      assert.deepEqual(
        (await read()).map((s) => [s.name, s.values?.[2]]),
        [
          ['group_offer_view_v3', [added]],
          ['group_offer_view_v3', [added]],
        ],
      );
      // A new catalogue version: the group's order is worked out again, its enrolments still known.
      assert.deepEqual(
        (await read('?sort=relevance')).map((s) => [s.name, s.values?.[2]]),
        [['group_ranked_view_v4', []]],
      );
    });

    it('lists offers of an inactive merchant as ended, never as active', async () => {
      const closing = await createMerchant(app);
      const offer = await createOffer(app, closing.id, { startsAt: daysFromNow(-1) });
      const path = `${base()}/merchant/${closing.id}/offers`;
      assert.deepEqual(ids(await walkPages(issuer, `${path}?status=active`, 50)), [offer.id]);
      await app.operator('PATCH', `/admin/v1/merchants/${closing.id}`, { status: 'inactive' });
      assert.deepEqual(ids(await walkPages(issuer, `${path}?status=active`, 50)), []);
      assert.deepEqual(ids(await walkPages(issuer, `${base()}/offers?merchantId=${closing.id}&status=active`, 50)), []);
      assert.deepEqual(ids(await walkPages(issuer, `${path}?status=ended`, 50)), [offer.id]);
      assert.equal((await issuer.call('GET', `${base()}/offer/${offer.id}`)).body.status, 'ended');
    });

    it('shows the branded rate an offer pays: 0 where the merchant has no branded balance, and not under type=branded', async () => {
      const plain = await createMerchant(app); // branded balance disabled
      const offer = await createOffer(app, plain.id, { cashbackRateBps: 300, brandedRateBps: 200 });
      const listed = await walkPages(issuer, `${base()}/merchant/${plain.id}/offers`, 50);
      assert.deepEqual(
        listed.map((o) => [o.id, o.cashbackRateBps, o.brandedRateBps]),
        [[offer.id, 300, 0]],
      );
      assert.equal((await issuer.call('GET', `${base()}/offer/${offer.id}`)).body.brandedRateBps, 0);
      assert.deepEqual(ids(await walkPages(issuer, `${base()}/merchant/${plain.id}/offers?type=branded`, 50)), []);
      assert.deepEqual(ids(await walkPages(issuer, `${base()}/offers?merchantId=${plain.id}&type=cashback`, 50)), [
        offer.id,
      ]);
      // The operator sees the catalogue as set.
      assert.equal(offer.brandedRateBps, 200);
    });

    it("shows no branded rate to an issuer whose availability delay reaches the merchant's expiry", async () => {
      const short = await createMerchant(app, {
        brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 30 },
      });
      const offer = await createOffer(app, short.id, { cashbackRateBps: 100, brandedRateBps: 400 });
      const patient = await newIssuer(app);
      const patientChg = await createGroup(patient);
      assert.equal(
        (await app.operator('PATCH', `/admin/v1/issuers/${patient.id}`, { brandedAvailabilityDelayDays: 30 })).status,
        200,
      );
      assert.equal((await patient.call('GET', `/api/v2/chg/${patientChg}/offer/${offer.id}`)).body.brandedRateBps, 0);
      assert.deepEqual(
        ids(await walkPages(patient, `/api/v2/chg/${patientChg}/offers?merchantId=${short.id}&type=branded`, 50)),
        [],
      );
      // Another issuer, with no delay, is paid the branded rate there.
      assert.equal((await issuer.call('GET', `${base()}/offer/${offer.id}`)).body.brandedRateBps, 400);
      assert.deepEqual(ids(await walkPages(issuer, `${base()}/offers?merchantId=${short.id}&type=branded`, 50)), [
        offer.id,
      ]);
    });

    it('refuses a merchant whose branded balance would become available only after it expired', async () => {
      const res = await app.operator('POST', '/admin/v1/merchants', {
        name: uniq('Merchant'),
        category: 'dining',
        brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 30, expiryDays: 30 },
      });
      assertError(res, 400, 'availability_not_before_expiry');
      const ok = await createMerchant(app, {
        brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 10, expiryDays: 30 },
      });
      assertError(
        await app.operator('PATCH', `/admin/v1/merchants/${ok.id}`, {
          brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 10, expiryDays: 10 },
        }),
        400,
        'availability_not_before_expiry',
      );
      const after = await app.operator('GET', `/admin/v1/merchants/${ok.id}`);
      assert.equal(after.body.brandedBalance.expiryDays, 30, 'the refused update changed nothing');
    });

    it('says on every read of an opt-in offer whether the group has activated its merchant', async () => {
      const activatedOn = async () => {
        const list = await walkPages(issuer, `${base()}/offers?merchantId=${merchant.id}`, 2);
        const scoped = await walkPages(issuer, `${base()}/merchant/${merchant.id}/offers`, 50);
        const one = await issuer.call('GET', `${base()}/offer/${offers.both.id}`);
        const oneScoped = await issuer.call('GET', `${base()}/merchant/${merchant.id}/offer/${offers.both.id}`);
        return [...new Set([...list, ...scoped, one.body, oneScoped.body].map((o) => o.activated))];
      };
      assert.deepEqual(await activatedOn(), [false]);
      assert.equal((await issuer.call('PUT', `${base()}/merchant/${merchant.id}/activation`, {})).status, 201);
      assert.deepEqual(await activatedOn(), [true]);
      assert.equal((await issuer.call('DELETE', `${base()}/merchant/${merchant.id}/activation`)).status, 200);
      assert.deepEqual(await activatedOn(), [false]);
    });

    it('reads one offer on both routes with the API.md shape', async () => {
      const res = await issuer.call('GET', `${base()}/offer/${offers.both.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'activated',
        'activation',
        'audience',
        'brandedRateBps',
        'budgetMinor',
        'budgetPeriod',
        'cashbackRateBps',
        'description',
        'endsAt',
        'funding',
        'holdoutBps',
        'id',
        'maxRedemptionsPerChg',
        'maxRewardMinor',
        'maxRewardPerChgMinor',
        'mccs',
        'merchantId',
        'minSpendMinor',
        'priority',
        'returnPeriodDays',
        'reward',
        'startsAt',
        'status',
        'title',
      ]);
      const scoped = await issuer.call('GET', `${base()}/merchant/${merchant.id}/offer/${offers.ended.id}`);
      assert.equal(scoped.body.status, 'ended');
    });

    it("answers 404 for another merchant's offer, hidden or unknown offers, and 400 for malformed ids", async () => {
      assertError(
        await issuer.call('GET', `${base()}/merchant/${merchants[0].id}/offer/${offers.both.id}`),
        404,
        'offer_not_found',
      );
      const hiddenOffer = await createOffer(app, hidden.id);
      assertError(await issuer.call('GET', `${base()}/offer/${hiddenOffer.id}`), 404, 'offer_not_found');
      assert.equal((await walkPages(issuer, `${base()}/offers?merchantId=${hidden.id}`, 50)).length, 0);
      assertError(await issuer.call('GET', `${base()}/merchant/${hidden.id}/offers`), 404, 'merchant_not_found');
      assertError(await issuer.call('GET', `${base()}/offer/ofr_${crypto.randomUUID()}`), 404, 'offer_not_found');
      assertError(await other.call('GET', `${base()}/offer/${offers.both.id}`), 404, 'chg_not_found');
      assertError(await issuer.call('GET', `${base()}/offer/ofr_1`), 400, 'invalid_id');
      assertError(await issuer.call('GET', `${base()}/merchant/${merchant.id}/offer/offer`), 400, 'invalid_id');
    });
  });

  it("orders a group's offers by sort, each order paged by its own cursor, and refuses another order's", async () => {
    // Branded balance the issuer's groups can use (3-day delay, 365-day expiry), so reward counts both rates.
    const merchant = merchants[0];
    const made = [
      await createOffer(app, merchant.id, { cashbackRateBps: 100, brandedRateBps: 400, startsAt: daysFromNow(-9) }),
      await createOffer(app, merchant.id, { cashbackRateBps: 300, startsAt: daysFromNow(-8), endsAt: daysFromNow(3) }),
      await createOffer(app, merchant.id, {
        reward: {
          kind: 'tiered',
          tiers: [
            { minSpendMinor: 0, cashbackRateBps: 100, brandedRateBps: 0 },
            { minSpendMinor: 10_000, cashbackRateBps: 900, brandedRateBps: 0 },
          ],
        },
        startsAt: daysFromNow(-7),
        endsAt: daysFromNow(1),
      }),
      await createOffer(app, merchant.id, { cashbackRateBps: 200, startsAt: daysFromNow(-6), endsAt: daysFromNow(2) }),
    ];
    const ours = new Set(made.map((o) => o.id));
    const read = async (sort: string) =>
      (await walkPages(issuer, `${base()}/merchant/${merchant.id}/offers?sort=${sort}`, 1))
        .filter((o) => ours.has(o.id))
        .map((o) => made.findIndex((m) => m.id === o.id));
    assert.deepEqual(await read('starts_at'), [0, 1, 2, 3]);
    assert.deepEqual(await read('ends_at'), [2, 3, 1, 0], 'earliest end first, the open-ended offer last');
    assert.deepEqual(await read('reward'), [2, 0, 1, 3], 'a tiered offer by its highest tier: 9 %, 1 + 4 %, 3 %, 2 %');

    const first = await issuer.call('GET', `${base()}/merchant/${merchant.id}/offers?sort=reward&limit=1`);
    assert.ok(first.body.nextCursor);
    const cursor = encodeURIComponent(first.body.nextCursor);
    assertError(
      await issuer.call('GET', `${base()}/merchant/${merchant.id}/offers?sort=ends_at&cursor=${cursor}`),
      400,
      'invalid_query',
    );
    assertError(
      await issuer.call('GET', `${base()}/merchant/${merchant.id}/offers?cursor=${cursor}`),
      400,
      'invalid_query',
    );
    assertError(
      await issuer.call('GET', `${base()}/merchant/${merchant.id}/offers?sort=relevance&cursor=${cursor}`),
      400,
      'invalid_query',
    );
    const ranked = await issuer.call('GET', `${base()}/merchant/${merchant.id}/offers?sort=relevance&limit=1`);
    assert.equal(ranked.status, 200, ranked.text);
    assert.ok(Number.isInteger(ranked.body.data[0].relevance) && ranked.body.nextCursor);
    assertError(
      await issuer.call(
        'GET',
        `${base()}/merchant/${merchant.id}/offers?sort=reward&cursor=${encodeURIComponent(ranked.body.nextCursor)}`,
      ),
      400,
      'invalid_query',
    );
    assertError(await issuer.call('GET', `${base()}/offers?sort=relevant`), 400, 'invalid_query');
  });
});

/** The named statements the app's pool ran while `action` ran, with their parameters. */
async function statementsDuring(
  app: TestApp,
  action: () => Promise<void>,
): Promise<Array<{ name: string; values?: unknown[] }>> {
  const pool = poolOf(app.db);
  const query = pool.query;
  const seen: Array<{ name: string; values?: unknown[] }> = [];
  pool.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as { name?: string; values?: unknown[] };
    if (typeof config === 'object' && config?.name) seen.push({ name: config.name, values: config.values });
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof pool.query;
  try {
    await action();
  } finally {
    pool.query = query;
  }
  return seen;
}
