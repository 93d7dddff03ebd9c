// The operator's budget view of a month other than the server's (GET
// /admin/v1/merchants/{merchantId}/offers[/{offerId}]?period=YYYY-MM), on the real stack: a
// sandbox issuer whose clock is ahead spends its offer's monthly budget in a month the server
// has not reached, which the default view (the current month) does not show and ?period= does.
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { assertError } from '../helpers/app';
import { settledEvent, storedEvent } from '../helpers/events';
import { purchaseScenario } from '../helpers/scenario';

const month = (at: Date) => at.toISOString().slice(0, 7);

describe("the operator's offer budget by month (?period=)", function () {
  this.timeout(120_000);
  let stack: Stack;

  before(async () => {
    stack = await startStack();
  });
  after(() => stack?.stop());

  it("shows the month a sandbox issuer's clock spent, which the current month's view does not", async () => {
    const { issuer, card, merchant, offer } = await purchaseScenario(stack.app, {
      offer: { cashbackRateBps: 500, budgetMinor: 100_000, budgetPeriod: 'month' },
    });
    // 40 days ahead: another calendar month, whatever today is.
    const advanced = await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 40 });
    assert.equal(advanced.status, 200, advanced.text);
    const issuerMonth = month(new Date(advanced.body.now));
    const serverMonth = month(new Date());
    assert.notEqual(issuerMonth, serverMonth);

    const at = advanced.body.now;
    const purchase = settledEvent(card, { merchantId: merchant.id, amount: 10_000, createdAt: at, settledAt: at });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
    const stored = await storedEvent(stack.db, issuer.id, 'settled', purchase.id);
    assert.equal(await stack.waitForStatus(stored.id, FINAL_STATUSES), 'matched');

    const offerPath = `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`;
    const read = async (path: string) => {
      const res = await stack.app.operator('GET', path);
      assert.equal(res.status, 200, res.text);
      return res.body;
    };
    // The default view: the server's month, which the purchase did not draw on.
    assert.deepEqual((await read(offerPath)).budget, budgetUse(0, serverMonth));
    // The issuer's month: the purchase's 5 % of 10,000.
    assert.deepEqual((await read(`${offerPath}?period=${issuerMonth}`)).budget, budgetUse(500, issuerMonth));
    // The merchant's list shows the same month for each of its offers.
    const list = await read(`/admin/v1/merchants/${merchant.id}/offers?period=${issuerMonth}`);
    assert.deepEqual(list.data.find((o: any) => o.id === offer.id).budget, budgetUse(500, issuerMonth));
    const listNow = await read(`/admin/v1/merchants/${merchant.id}/offers?limit=10`);
    assert.deepEqual(listNow.data.find((o: any) => o.id === offer.id).budget, budgetUse(0, serverMonth));
    // A month nothing was spent in.
    assert.deepEqual((await read(`${offerPath}?period=2001-01`)).budget, budgetUse(0, '2001-01'));
  });

  it('shows a lifetime budget whole whatever the month', async () => {
    const { issuer, card, merchant, offer } = await purchaseScenario(stack.app, {
      offer: { cashbackRateBps: 500, budgetMinor: 100_000, budgetPeriod: null },
    });
    const purchase = settledEvent(card, { merchantId: merchant.id, amount: 10_000 });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', purchase)).status, 204);
    const stored = await storedEvent(stack.db, issuer.id, 'settled', purchase.id);
    assert.equal(await stack.waitForStatus(stored.id, FINAL_STATUSES), 'matched');
    const res = await stack.app.operator('GET', `/admin/v1/merchants/${merchant.id}/offers/${offer.id}?period=2001-01`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.budget, budgetUse(500, 'lifetime'));
  });

  it('refuses a period that is not a month, YYYY-MM, with 400 naming it', async () => {
    const { merchant, offer } = await purchaseScenario(stack.app, {
      offer: { budgetMinor: 100_000, budgetPeriod: 'month' },
    });
    for (const path of [
      `/admin/v1/merchants/${merchant.id}/offers/${offer.id}`,
      `/admin/v1/merchants/${merchant.id}/offers`,
    ]) {
      for (const period of ['2026-13', '2026-1', '2026-11-01', 'november']) {
        const res = await stack.app.operator('GET', `${path}?period=${period}`);
        assertError(res, 400, 'invalid_query');
        assert.ok(
          res.body.details.errors.some((e: { path: string }) => e.path === '/period'),
          `${path}?period=${period}: ${res.text}`,
        );
      }
    }
  });
});

function budgetUse(usedMinor: number, period: string) {
  return { limitMinor: 100_000, usedMinor, remainingMinor: 100_000 - usedMinor, period };
}
