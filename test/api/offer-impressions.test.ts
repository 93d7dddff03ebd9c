// Offer impressions over HTTP (API.md, Targeted offers, "Impressions"): the app reports what it
// showed a group; an item for an offer the group is not shown is refused alone, the others stored.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { assertError, newIssuer, startTestApp, type TestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { merchantWithOffer } from '../helpers/scenario';
import { holdoutArm } from '../../core/rules/holdout';
import { exampleId } from '../../api/schemas/examples';

describe('POST /api/v2/chg/{chgId}/offer-impressions', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let targeted: { merchant: any; offer: any };
  let plain: { merchant: any; offer: any };
  let treated: any;
  let control: any;

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    targeted = await merchantWithOffer(app, { offer: { cashbackRateBps: 500, activation: 'auto', holdoutBps: 5000 } });
    plain = await merchantWithOffer(app, { offer: { cashbackRateBps: 300 } });
    treated = await groupIn('treated');
    control = await groupIn('control');
  });
  after(async () => app?.close());

  /** A group of the issuer in the arm asked for (groups are drawn until the hash puts one there). */
  async function groupIn(arm: 'treated' | 'control'): Promise<any> {
    for (let i = 0; i < 40; i++) {
      const res = await issuer.call('POST', '/api/v2/chg', groupBody());
      assert.equal(res.status, 201, res.text);
      if (holdoutArm(targeted.offer.id, res.body.id, 5000) === arm) return res.body;
    }
    return assert.fail(`no ${arm} group in 40 draws`);
  }

  const report = (chgId: string, impressions: unknown[], headers: Record<string, string> = {}) =>
    app.request('POST', `/api/v2/chg/${chgId}/offer-impressions`, {
      token: issuer.token,
      body: { impressions },
      headers,
    });

  const stored = (chgId: string) =>
    app.db.offerImpression.findMany({ where: { chgId }, orderBy: [{ shownAt: 'asc' }, { id: 'asc' }] });

  it("stores what the app showed, dated as sent or at the issuer's now, and refuses each item the group is not shown", async () => {
    const at = new Date(Date.now() - 60_000).toISOString();
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const before = Date.now();
    const res = await report(treated.id, [
      { offerId: targeted.offer.id, at, placement: 'home_carousel' },
      { offerId: plain.offer.id },
      { offerId: exampleId('ofr', 9) },
      { offerId: targeted.offer.id, at: future },
    ]);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(
      res.body.results.map((r: any) => [r.index, r.offerId, r.status, r.error?.reasonCode]),
      [
        [0, targeted.offer.id, 'stored', undefined],
        [1, plain.offer.id, 'stored', undefined],
        [2, exampleId('ofr', 9), 'refused', 'offer_not_found'],
        [3, targeted.offer.id, 'refused', 'impression_in_future'],
      ],
    );
    assert.equal(res.body.results[0].at, at);
    assert.deepEqual(res.body.results[3].error.details.errors, [
      { path: '/impressions/3/at', message: 'must not be later than 5 minutes after now' },
    ]);
    const rows = await stored(treated.id);
    assert.deepEqual(
      rows.map((r) => [r.offerId, r.issuerId, r.placement]),
      [
        [targeted.offer.id, issuer.id, 'home_carousel'],
        [plain.offer.id, issuer.id, null],
      ],
    );
    assert.equal(rows[0].shownAt.toISOString(), at);
    assert.ok(rows[1].shownAt.getTime() >= before && rows[1].shownAt.getTime() <= Date.now(), 'dated now');
  });

  it('refuses the offer a control group is held out of, as if it did not exist, and stores its other items', async () => {
    const res = await report(control.id, [{ offerId: targeted.offer.id }, { offerId: plain.offer.id }]);
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(
      res.body.results.map((r: any) => [r.status, r.error?.reasonCode]),
      [
        ['refused', 'offer_not_found'],
        ['stored', undefined],
      ],
    );
    assert.deepEqual(
      (await stored(control.id)).map((r) => r.offerId),
      [plain.offer.id],
    );
    const enrolment = await app.db.offerEnrolment.findUniqueOrThrow({
      where: { offerId_chgId: { offerId: targeted.offer.id, chgId: control.id } },
    });
    assert.equal(enrolment.arm, 'control');
  });

  it('answers 400 with the results when every item is refused, and stores nothing', async () => {
    const res = await report(control.id, [{ offerId: targeted.offer.id }, { offerId: exampleId('ofr', 8) }]);
    assert.equal(res.status, 400, res.text);
    assert.deepEqual(
      res.body.results.map((r: any) => r.status),
      ['refused', 'refused'],
    );
    assert.equal((await stored(control.id)).length, 1);
  });

  it('counts the same offer, instant and placement once, and replays a batch sent again with its Idempotency-Key', async () => {
    const at = new Date(Date.now() - 120_000).toISOString();
    const item = { offerId: targeted.offer.id, at, placement: 'merchant_page' };
    const first = await report(treated.id, [item]);
    assert.deepEqual([first.status, first.body.results[0].status], [202, 'stored']);
    const again = await report(treated.id, [item, { ...item, placement: 'search' }]);
    assert.deepEqual(
      again.body.results.map((r: any) => r.status),
      ['duplicate', 'stored'],
    );

    const keyed = { 'idempotency-key': `imp-${randomUUID()}` };
    const later = { offerId: plain.offer.id, at: new Date(Date.now() - 30_000).toISOString() };
    const sent = await report(treated.id, [later], keyed);
    const resent = await report(treated.id, [later], keyed);
    assert.deepEqual([sent.status, resent.status], [202, 202]);
    assert.deepEqual(resent.body, sent.body, 'the first answer, not a duplicate');
    assert.equal(resent.headers.get('idempotent-replayed'), 'true');
    const rows = (await stored(treated.id)).filter(
      (r) => r.offerId === plain.offer.id && r.shownAt.toISOString() === later.at,
    );
    assert.equal(rows.length, 1);
  });

  it("answers 404 for another issuer's group, as for a missing one, and stores nothing", async () => {
    const other = await newIssuer(app);
    const theirs = await other.call('POST', '/api/v2/chg', groupBody());
    assert.equal(theirs.status, 201, theirs.text);
    assertError(await report(theirs.body.id, [{ offerId: plain.offer.id }]), 404, 'chg_not_found');
    assertError(await report(exampleId('chg', 7), [{ offerId: plain.offer.id }]), 404, 'chg_not_found');
    assert.equal((await stored(theirs.body.id)).length, 0);
  });

  it('refuses a malformed batch whole, naming the field', async () => {
    const none = await report(treated.id, []);
    assertError(none, 400, 'invalid_body');
    const tooMany = await report(
      treated.id,
      Array.from({ length: 101 }, () => ({ offerId: plain.offer.id })),
    );
    assertError(tooMany, 400, 'invalid_body');
    const badPlacement = await report(treated.id, [{ offerId: plain.offer.id, placement: 'Home Page' }]);
    assertError(badPlacement, 400, 'invalid_body');
    assert.ok(
      badPlacement.body.details.errors.some((e: any) => e.path === '/impressions/0/placement'),
      JSON.stringify(badPlacement.body.details),
    );
  });
});
