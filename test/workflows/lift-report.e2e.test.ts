// The lift report end to end (API.md, Targeted offers, "Lift report"): groups of two issuers
// enrolled in an auto offer with half its audience held out buy and get refunds through the real
// API, worker, PostgreSQL and Temporal dev server; the operator's report adds up each arm by hand-
// checkable figures, and a report for one issuer never holds another's groups.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { assertError, type TestIssuer } from '../helpers/app';
import { settledEvent, cardOf, storedEvent } from '../helpers/events';
import { groupBody } from '../helpers/groups';
import { issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { holdoutArm } from '../../core/rules/holdout';
import { exampleId } from '../../api/schemas/examples';

const START_DELAY_MS = 30_000;

describe('lift report (end to end)', function () {
  this.timeout(300_000);
  let stack: Stack;
  let mine: TestIssuer;
  let theirs: TestIssuer;
  let offer: any;
  let merchant: any;
  let startsAt: string;
  // Its own segment, so that no other test's group is in the audience.
  const segment = `lift-${randomUUID().slice(0, 8)}`;

  before(async () => {
    stack = await startStack();
    mine = await issuerWith(stack.app, { environment: 'sandbox' });
    theirs = await issuerWith(stack.app, { environment: 'sandbox' });
    // The offer starts once the groups are drawn (groupIn), so that each enters it with its segments
    // as the test leaves them, whoever enrols it first: a request of the test or an enrolment run.
    startsAt = new Date(Date.now() + START_DELAY_MS).toISOString();
    ({ merchant, offer } = await merchantWithOffer(stack.app, {
      offer: {
        cashbackRateBps: 500,
        activation: 'auto',
        audience: { segments: [segment] },
        holdoutBps: 5000,
        startsAt,
      },
    }));
    await scenario();
  });
  after(async () => {
    if (stack) for (const issuer of [mine, theirs]) if (issuer) await assertLedgerHealthy(stack.db, issuer.id);
    await stack?.stop();
  });

  /**
   * A group of the issuer that will enter the offer in the audience and in the arm asked for.
   * Groups are drawn outside the audience until the hash puts one in the arm, which alone then
   * takes the segment: the draws left over never count in the report, in no arm.
   */
  async function groupIn(issuer: TestIssuer, arm: 'treated' | 'control'): Promise<any> {
    for (let i = 0; i < 40; i++) {
      const body = groupBody();
      const res = await issuer.call('POST', '/api/v2/chg', body);
      assert.equal(res.status, 201, res.text);
      if (holdoutArm(offer.id, res.body.id, 5000) !== arm) continue;
      const synced = await issuer.call('POST', '/api/v2/chg', { ...body, segments: [segment] });
      assert.equal(synced.status, 200, synced.text);
      assert.ok(Date.now() < Date.parse(startsAt), 'drawn before the offer starts');
      return synced.body;
    }
    return assert.fail(`no ${arm} group in 40 draws`);
  }

  /** Waits for the offer's start, then enrols each group by listing its offers. */
  async function enrolAtStart(issuer: TestIssuer, groups: any[]): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(startsAt) - Date.now() + 100)));
    for (const group of groups) {
      const listed = await issuer.call('GET', `/api/v2/chg/${group.id}/offers`);
      assert.equal(listed.status, 200, listed.text);
    }
  }

  /** A settled event at the merchant (a purchase, or a refund of one), dated now, processed. */
  async function settle(issuer: TestIssuer, group: any, amount: number, refunds?: string): Promise<string> {
    const at = new Date().toISOString();
    const event = settledEvent(cardOf(group), {
      amount,
      merchantId: merchant.id,
      createdAt: at,
      settledAt: at,
      ...(refunds && { state: 'refunded', relatedTransactionId: refunds }),
    });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    await stack.waitForStatus(row.id, FINAL_STATUSES);
    return event.id;
  }

  /**
   * Mine: treated t1 buys 2000 and 1000; t2 buys 3000, 1000 of it refunded; t3 buys nothing.
   * Control c1 buys 1000; c2 buys 500, all of it refunded. Theirs: treated 10000, control 7000.
   */
  async function scenario() {
    const [t1, t2, t3] = [
      await groupIn(mine, 'treated'),
      await groupIn(mine, 'treated'),
      await groupIn(mine, 'treated'),
    ];
    const [c1, c2] = [await groupIn(mine, 'control'), await groupIn(mine, 'control')];
    const [tt, tc] = [await groupIn(theirs, 'treated'), await groupIn(theirs, 'control')];
    await enrolAtStart(mine, [t1, t2, t3, c1, c2]);
    await enrolAtStart(theirs, [tt, tc]);
    await settle(mine, t1, 2000);
    await settle(mine, t1, 1000);
    await settle(mine, t2, 1000, await settle(mine, t2, 3000));
    await settle(mine, c1, 1000);
    await settle(mine, c2, 500, await settle(mine, c2, 500));
    await settle(theirs, tt, 10_000);
    await settle(theirs, tc, 7000);
    const shown = await mine.call('POST', `/api/v2/chg/${t1.id}/offer-impressions`, {
      impressions: [
        { offerId: offer.id, placement: 'home' },
        { offerId: offer.id, placement: 'merchant_page' },
      ],
    });
    assert.equal(shown.status, 202, shown.text);
    const refused = await mine.call('POST', `/api/v2/chg/${c1.id}/offer-impressions`, {
      impressions: [{ offerId: offer.id }],
    });
    assert.equal(refused.status, 400, 'a control group is never shown the offer');
  }

  const lift = (path: string) => stack.app.operator('GET', path);

  it("adds up each arm of one issuer's groups: spend net of refunds, purchasers, rewards, impressions", async () => {
    const res = await lift(`/admin/v1/offers/${offer.id}/lift?issuerId=${mine.id}`);
    assert.equal(res.status, 200, res.text);
    const r = res.body;
    assert.equal(r.offerId, offer.id);
    assert.equal(r.window.from, offer.startsAt, "from defaults to the offer's start");
    assert.ok(Date.parse(r.window.to) <= Date.now() && Date.parse(r.window.to) > Date.now() - 60_000, 'to: now');
    // 5 % of 2000, 1000 and 3000, less 5 % of the 1000 refunded.
    assert.deepEqual(r.treated, {
      groups: 3,
      purchasers: 2,
      purchases: 3,
      spendMinor: 5000,
      rewardMinor: 250,
      impressions: 2,
    });
    // The purchase refunded in full is neither a purchase nor spend.
    assert.deepEqual(r.control, {
      groups: 2,
      purchasers: 1,
      purchases: 1,
      spendMinor: 1000,
      rewardMinor: 0,
      impressions: 0,
    });
    assert.deepEqual(r.spendPerGroupMinor, { treated: 1667, control: 500 });
    // (5000 / 3) / (1000 / 2) - 1 = 2.3333; 3 x (1666.67 - 500) = 3500; 250 x 10000 / 3500 = 714.3, up.
    assert.equal(r.liftBps, 23_333);
    assert.deepEqual(r.ci95Bps, [null, null], 'far fewer than 100 purchasers an arm');
    assert.equal(r.incrementalSpendMinor, 3500);
    assert.equal(r.costPerIncrementalMinor, 715);
  });

  it("never counts another issuer's groups in a report for one issuer, and counts every issuer's without one", async () => {
    const theirsOnly = (await lift(`/admin/v1/offers/${offer.id}/lift?issuerId=${theirs.id}`)).body;
    assert.deepEqual(
      [
        theirsOnly.treated.groups,
        theirsOnly.treated.spendMinor,
        theirsOnly.control.groups,
        theirsOnly.control.spendMinor,
      ],
      [1, 10_000, 1, 7000],
    );
    const all = await lift(`/admin/v1/offers/${offer.id}/lift`);
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(
      [all.body.treated.groups, all.body.treated.spendMinor, all.body.control.groups, all.body.control.spendMinor],
      [4, 15_000, 3, 8000],
    );
    assert.equal(all.body.treated.rewardMinor, 750);
  });

  it("gives a merchant's report over its offers' enrolments", async () => {
    const res = await lift(`/admin/v1/merchants/${merchant.id}/lift?issuerId=${mine.id}`);
    assert.equal(res.status, 200, res.text);
    const offerReport = (await lift(`/admin/v1/offers/${offer.id}/lift?issuerId=${mine.id}&to=${res.body.window.to}`))
      .body;
    const { merchantId, offerIds, ...figures } = res.body;
    const { offerId: _offerId, ...offerFigures } = offerReport;
    assert.deepEqual([merchantId, offerIds], [merchant.id, [offer.id]]);
    assert.deepEqual(figures, offerFigures);
  });

  it('counts only what falls in the window, and keeps the groups enrolled', async () => {
    const from = new Date(Date.now() + 1000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const res = await lift(`/admin/v1/offers/${offer.id}/lift?issuerId=${mine.id}&from=${from}&to=${to}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.window, { from, to });
    assert.deepEqual([res.body.treated.groups, res.body.treated.spendMinor, res.body.treated.impressions], [3, 0, 0]);
    assert.deepEqual(
      [res.body.liftBps, res.body.incrementalSpendMinor, res.body.costPerIncrementalMinor],
      [null, 0, null],
    );
    assert.deepEqual(res.body.spendPerGroupMinor, { treated: 0, control: 0 });
  });

  it('refuses a bad query naming the field, and answers 404 for what does not exist', async () => {
    const badIssuer = await lift(`/admin/v1/offers/${offer.id}/lift?issuerId=nope`);
    assertError(badIssuer, 400, 'invalid_query');
    assert.equal(badIssuer.body.details.errors[0].path, '/issuerId');
    const badFrom = await lift(`/admin/v1/offers/${offer.id}/lift?from=yesterday`);
    assertError(badFrom, 400, 'invalid_query');
    assert.equal(badFrom.body.details.errors[0].path, '/from');
    const backwards = await lift(
      `/admin/v1/offers/${offer.id}/lift?from=2026-06-02T00:00:00.000Z&to=2026-06-01T00:00:00.000Z`,
    );
    assertError(backwards, 400, 'invalid_query');
    assert.equal(backwards.body.details.errors[0].path, '/to');
    assertError(await lift(`/admin/v1/offers/${offer.id}/lift?window=all`), 400, 'invalid_query');
    assertError(await lift(`/admin/v1/offers/${exampleId('ofr', 5)}/lift`), 404, 'offer_not_found');
    assertError(await lift(`/admin/v1/merchants/${exampleId('mp', 5)}/lift`), 404, 'merchant_not_found');
    assertError(
      await lift(`/admin/v1/offers/${offer.id}/lift?issuerId=${exampleId('iss', 5)}`),
      404,
      'issuer_not_found',
    );
    assertError(await mine.call('GET', `/admin/v1/offers/${offer.id}/lift`), 401);
  });
});
