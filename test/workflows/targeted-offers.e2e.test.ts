// Targeted offers end to end through the real API, worker, PostgreSQL and Temporal dev server:
// an auto offer for the premium segment with half its audience held out, and an opt-in offer for
// groups new to its merchant. Each group is enrolled once, as of its entry, and keeps its arm: a
// treated group sees and earns the offer; a control group and a group outside the audience never
// see it, and their purchases are matched and recorded with the reason and earn nothing from it.
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { assertError, type TestIssuer } from '../helpers/app';
import { settledEvent, cardOf, storedEvent } from '../helpers/events';
import { groupBody } from '../helpers/groups';
import { activate, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { holdoutArm } from '../../core/rules/holdout';
import { configureEndpoint, startReceiver, waitFor, type Receiver } from '../helpers/webhooks';
import { Webhook } from 'standardwebhooks';

const DAY_MS = 86_400_000;

describe('targeted offers (end to end)', function () {
  this.timeout(300_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let premium: { merchant: any; offer: any };
  let receiver: Receiver;
  let secret: string;

  before(async () => {
    stack = await startStack();
    issuer = await issuerWith(stack.app, { environment: 'sandbox' });
    receiver = await startReceiver();
    secret = await configureEndpoint(issuer, receiver.url);
    premium = await merchantWithOffer(stack.app, {
      offer: { cashbackRateBps: 500, activation: 'auto', audience: { segments: ['premium'] }, holdoutBps: 5000 },
    });
  });
  after(async () => {
    if (stack) await assertLedgerHealthy(stack.db, issuer.id);
    await stack?.stop();
    await receiver?.close();
  });

  /** The offer_available webhooks received, verified as an issuer verifies them. */
  const available = () =>
    receiver.requests
      .map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as any)
      .filter((w) => w.type === 'offer_available')
      .map((w) => w.data);

  async function newGroup(segments: string[]): Promise<any> {
    const res = await issuer.call('POST', '/api/v2/chg', groupBody({ segments }));
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  /** A premium group in the arm asked for (groups are drawn until the hash puts one there). */
  async function premiumGroupIn(arm: 'treated' | 'control'): Promise<any> {
    for (let i = 0; i < 40; i++) {
      const group = await newGroup(['premium']);
      if (holdoutArm(premium.offer.id, group.id, 5000) === arm) return group;
    }
    return assert.fail(`no ${arm} group in 40 draws`);
  }

  const issuerNow = async () => (await issuer.call('GET', '/api/v2/sandbox/clock')).body.now as string;

  /** A settled purchase at the merchant, dated now on the issuer's clock, processed; its stored row. */
  async function buy(group: any, merchantId: string, amount: number) {
    const at = await issuerNow();
    const event = settledEvent(cardOf(group), { amount, merchantId, createdAt: at, settledAt: at });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    await stack.waitForStatus(row.id, FINAL_STATUSES);
    const trace = await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${row.id}/match-trace`);
    assert.equal(trace.status, 200, trace.text);
    const earned = await stack.db.rewardEvent.aggregate({
      where: { transactionId: row.id, type: 'cashback_earned' },
      _sum: { amountMinor: true },
    });
    return { id: row.id, trace: trace.body.trace, earnedMinor: Number(earned._sum.amountMinor ?? 0n) };
  }

  const listed = async (group: any) =>
    ((await issuer.call('GET', `/api/v2/chg/${group.id}/offers?limit=200`)).body.data as any[]).map((o) => o.id);

  it('shows and pays an auto offer to a treated group without an activation, and nothing to a control group', async () => {
    const treated = await premiumGroupIn('treated');
    const control = await premiumGroupIn('control');
    assert.ok((await listed(treated)).includes(premium.offer.id));
    assert.equal((await listed(control)).includes(premium.offer.id), false);
    assertError(
      await issuer.call('GET', `/api/v2/chg/${control.id}/offer/${premium.offer.id}`),
      404,
      'offer_not_found',
    );
    const shown = await issuer.call('GET', `/api/v2/chg/${treated.id}/offer/${premium.offer.id}`);
    assert.deepEqual([shown.status, shown.body.activation, shown.body.activated], [200, 'auto', null]);
    const inList = (await issuer.call('GET', `/api/v2/chg/${treated.id}/offers?limit=200`)).body.data as any[];
    assert.equal(inList.find((o) => o.id === premium.offer.id).activated, null, 'an auto offer needs no activation');

    const paid = await buy(treated, premium.merchant.id, 2000);
    assert.equal(paid.earnedMinor, 100, '5 % of 2000, with no activation of the merchant');
    const held = await buy(control, premium.merchant.id, 2000);
    assert.equal(held.earnedMinor, 0);
    assert.deepEqual(held.trace.earn.reasons, ['holdout']);
    const eligibility = await issuer.call(
      'GET',
      `/api/v2/chg/${control.id}/merchant/${premium.merchant.id}/eligibility?amountMinor=2000`,
    );
    assert.equal(eligibility.status, 200, eligibility.text);
    assert.deepEqual([eligibility.body.eligible, eligibility.body.reasons], [false, ['holdout']]);

    // The treated group is told once that the offer is there for it; the control group never.
    const told = await waitFor('offer_available', async () =>
      available().some((d) => d.chgId === treated.id && d.offerId === premium.offer.id) ? available() : undefined,
    );
    assert.deepEqual(
      // Only this offer's: the shared catalogue may hold other premium offers.
      told.filter((d: any) => d.chgId === treated.id && d.offerId === premium.offer.id),
      [{ chgId: treated.id, offerId: premium.offer.id, merchantId: premium.merchant.id }],
    );
    assert.equal(
      told.some((d: any) => d.chgId === control.id && d.offerId === premium.offer.id),
      false,
    );
    const enrolments = await stack.db.offerEnrolment.findMany({
      where: { offerId: premium.offer.id, chgId: { in: [treated.id, control.id] } },
      orderBy: { arm: 'desc' },
    });
    assert.deepEqual(
      enrolments.map((e) => [e.chgId, e.inAudience, e.arm]),
      [
        [treated.id, true, 'treated'],
        [control.id, true, 'control'],
      ],
    );
  });

  it('keeps a group out of an audience it was not in, and keeps an enrolled group in whatever changes later', async () => {
    const basic = await newGroup(['basic']);
    assert.equal((await listed(basic)).includes(premium.offer.id), false);
    const outside = await buy(basic, premium.merchant.id, 2000);
    assert.deepEqual([outside.earnedMinor, outside.trace.earn.reasons], [0, ['not_in_audience']]);

    const treated = await premiumGroupIn('treated');
    assert.equal((await buy(treated, premium.merchant.id, 1000)).earnedMinor, 50);
    // The group leaves the segment and the operator narrows the audience: neither moves a group
    // already enrolled, which was decided as of its entry.
    const resync = await issuer.call('POST', '/api/v2/chg', {
      ...groupBody({ segments: ['basic'] }),
      externalId: treated.externalId,
      cardholders: treated.cardholders.map((c: any) => ({
        externalId: c.externalId,
        cards: c.cards.map((k: any) => ({ externalId: k.externalId, last4: k.last4, network: k.network })),
      })),
    });
    assert.equal(resync.status, 200, resync.text);
    const narrowed = await stack.app.operator(
      'PATCH',
      `/admin/v1/merchants/${premium.merchant.id}/offers/${premium.offer.id}`,
      { audience: { segments: ['vip'] } },
    );
    assert.equal(narrowed.status, 200, narrowed.text);
    try {
      assert.equal((await buy(treated, premium.merchant.id, 1000)).earnedMinor, 50);
      assert.ok((await listed(treated)).includes(premium.offer.id));
      // A group entering now is decided by the new audience.
      const late = await newGroup(['premium']);
      assert.equal((await listed(late)).includes(premium.offer.id), false);
      const row = await stack.db.offerEnrolment.findUniqueOrThrow({
        where: { offerId_chgId: { offerId: premium.offer.id, chgId: late.id } },
      });
      assert.deepEqual([row.inAudience, row.arm], [false, null]);
    } finally {
      await stack.app.operator('PATCH', `/admin/v1/merchants/${premium.merchant.id}/offers/${premium.offer.id}`, {
        audience: { segments: ['premium'] },
      });
    }
  });

  it('decides merchant history as of the entry: a purchase before the offer starts makes a group existing, not new', async () => {
    const startsAt = new Date(Date.parse(await issuerNow()) + DAY_MS).toISOString();
    const { merchant, offer } = await merchantWithOffer(stack.app, {
      offer: { cashbackRateBps: 500, startsAt, audience: { merchantHistory: { kind: 'new', lookbackDays: 30 } } },
    });
    const regular = await newGroup([]);
    const newcomer = await newGroup([]);
    for (const g of [regular, newcomer]) await activate(issuer, g.id, merchant.id);
    // Before the offer starts: the regular buys there (nothing to earn yet).
    assert.equal((await buy(regular, merchant.id, 3000)).earnedMinor, 0);
    const advanced = await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 2 });
    assert.equal(advanced.status, 200, advanced.text);
    const again = await buy(regular, merchant.id, 3000);
    assert.deepEqual([again.earnedMinor, again.trace.earn.reasons], [0, ['not_in_audience']]);
    assert.equal((await buy(newcomer, merchant.id, 3000)).earnedMinor, 150);
    const rows = await stack.db.offerEnrolment.findMany({ where: { offerId: offer.id } });
    const byGroup = new Map(rows.map((r) => [r.chgId, r]));
    assert.equal(byGroup.get(regular.id)?.inAudience, false);
    assert.match(byGroup.get(regular.id)!.detail, /new in 30 days before/);
    assert.equal(byGroup.get(newcomer.id)?.arm, 'treated');
    assert.equal(byGroup.get(newcomer.id)?.enteredAt.toISOString(), startsAt, 'entered when the offer started');
  });
});
