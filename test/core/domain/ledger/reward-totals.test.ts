// The running totals of reward events (migration reward_totals): written with the events in the
// posting's transaction, checked by ledgerInvariants after every test scenario. This file
// shows the check fire on a total that drifted, and reward events refusing to change (the
// totals only ever add inserts).
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../../../helpers/app';
import { createMerchant, createOffer, daysFromNow } from '../../../helpers/catalogue';
import { settledEvent, cardOf } from '../../../helpers/events';
import { groupBody } from '../../../helpers/groups';
import { createLogger } from '../../../../core/logger';
import { settleTransaction } from '../../../../activities/lifecycle/settle';
import { ledgerInvariants } from '../../../../core/domain/ledger';

describe('reward totals', () => {
  let app: TestApp;
  let issuer: TestIssuer;
  let chgId: string;
  let offerId: string;

  before(async () => {
    app = await startTestApp();
    issuer = await newIssuer(app);
    const merchant = await createMerchant(app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
    });
    offerId = (
      await createOffer(app, merchant.id, { cashbackRateBps: 500, brandedRateBps: 100, startsAt: daysFromNow(-1) })
    ).id;
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    chgId = group.id;
    await issuer.call('PUT', `/api/v2/chg/${chgId}/merchant/${merchant.id}/activation`, {});
    const deps = { db: app.db, logger: createLogger('silent'), clock: { now: () => new Date() } };
    for (const amount of [10_000, 4_000]) {
      const event = settledEvent(cardOf(group), { amount, merchantId: merchant.id });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
      const row = await app.db.ingestedEvent.findUniqueOrThrow({
        where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: event.id } },
      });
      await settleTransaction(deps, { eventId: row.id });
    }
  });
  after(() => app.close());

  it('adds every posting to its group, merchant, offer and type', async () => {
    const totals = await app.db.rewardTotal.findMany({
      where: { issuerId: issuer.id, chgId },
      orderBy: { type: 'asc' },
    });
    // 5% and 1% of 10,000; the second purchase spends the first grant of 100, then earns on 3,900.
    assert.deepEqual(
      totals.map((t) => [
        t.type,
        t.offerId === offerId || t.offerId === '' ? t.offerId === offerId : 'other',
        Number(t.amountMinor),
        Number(t.eventCount),
      ]),
      [
        ['branded_earned', true, 100 + 39, 2],
        ['branded_spent', false, 100, 1],
        ['cashback_earned', true, 500 + 195, 2],
      ],
    );
    assert.deepEqual(await ledgerInvariants(app.db, { issuerId: issuer.id }), []);
  });

  it('reports a total that drifted from its events', async () => {
    await app.db
      .$executeRaw`UPDATE reward_total SET amount_minor = amount_minor + 1 WHERE chg_id = ${chgId} AND type = 'cashback_earned'`;
    try {
      const violations = await ledgerInvariants(app.db, { issuerId: issuer.id });
      assert.deepEqual(
        violations.map((v) => v.invariant),
        ['reward total equals the sum of its reward events'],
      );
      assert.match(violations[0].detail, /total 696 \(2 events\), events 695 \(2\)/);
    } finally {
      await app.db
        .$executeRaw`UPDATE reward_total SET amount_minor = amount_minor - 1 WHERE chg_id = ${chgId} AND type = 'cashback_earned'`;
    }
  });

  it('refuses to change or delete a reward event', async () => {
    const event = await app.db.rewardEvent.findFirstOrThrow({ where: { issuerId: issuer.id, chgId } });
    await assert.rejects(
      app.db.rewardEvent.update({ where: { id: event.id }, data: { amountMinor: 1n } }),
      /immutable/,
    );
    await assert.rejects(app.db.rewardEvent.delete({ where: { id: event.id } }), /immutable/);
  });
});
