// What eligibility estimates is what a purchase then earns: the per-group cap read from the
// ledger, and the branded rate as settlement pays it (none where the merchant has no branded
// balance, none for an issuer whose availability delay reaches the merchant's expiry).
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent } from '../helpers/events';
import { purchaseScenario, type ScenarioSetup } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';

describe('eligibility estimates what settlement pays', function () {
  this.timeout(120_000);
  let stack: Stack;
  const issuers: TestIssuer[] = [];

  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());
  afterEach(async () => {
    for (const issuer of issuers.splice(0)) await assertLedgerHealthy(stack.db, issuer.id);
  });

  /** The scenario, with what the merchant estimates and what a purchase there then earns. */
  async function setUp(setup: ScenarioSetup) {
    const { issuer, group, card, merchant, offer } = await purchaseScenario(stack.app, setup);
    issuers.push(issuer);
    const path = `/api/v2/chg/${group.id}/merchant/${merchant.id}`;
    const estimate = async (amountMinor: number) =>
      (await issuer.call('GET', `${path}/eligibility?amountMinor=${amountMinor}`)).body;
    const purchase = async (amount: number) => {
      const event = settledEvent(card, { amount, merchantId: merchant.id });
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
      const txn = await storedEvent(stack.db, issuer.id, 'settled', event.id);
      const status = await stack.waitForStatus(txn.id, ['matched', 'not_matched', 'unknown']);
      const detail = (await issuer.call('GET', `/api/v2/chg/${group.id}/transaction/${txn.id}/reward-detail`)).body;
      const grants = await stack.db.rewardGrant.findMany({ where: { sourceTransactionId: txn.id } });
      return { status, earned: detail.earnedAmountMinor as number, grants, createdAt: Date.parse(event.createdAt) };
    };
    return { issuer, group, merchant, offer, estimate, purchase };
  }

  it('applies the per-group cap: the remaining cap, then offer_cap_reached', async () => {
    const { offer, estimate, purchase } = await setUp({ offer: { cashbackRateBps: 500, maxRewardPerChgMinor: 300 } });
    assert.deepEqual(pickEstimate(await estimate(4_000)), {
      eligible: true,
      reasons: [],
      winningOfferId: offer.id,
      estimatedRewardMinor: 200,
    });
    assert.equal((await purchase(4_000)).earned, 200);
    // 100 of the 300 cap is left: 5% of 4000 would be 200.
    assert.deepEqual(pickEstimate(await estimate(4_000)), {
      eligible: true,
      reasons: [],
      winningOfferId: offer.id,
      estimatedRewardMinor: 100,
    });
    assert.equal((await purchase(4_000)).earned, 100);
    const spent = await estimate(4_000);
    assert.deepEqual(
      [spent.eligible, spent.reasons, spent.estimatedRewardMinor],
      [false, ['offer_cap_reached'], undefined],
    );
    const last = await purchase(4_000);
    assert.deepEqual([last.status, last.earned], ['not_matched', 0]);
  });

  it('estimates cashback only at a merchant without branded balance, as settlement pays', async () => {
    const { estimate, purchase } = await setUp({ offer: { cashbackRateBps: 300, brandedRateBps: 200 } });
    assert.equal((await estimate(10_000)).estimatedRewardMinor, 300);
    const earned = await purchase(10_000);
    assert.deepEqual([earned.status, earned.earned, earned.grants.length], ['matched', 300, 0]);
  });

  it('posts the cashback and no grant when the issuer’s availability delay reaches the merchant’s expiry', async () => {
    const { estimate, purchase } = await setUp({
      settings: { brandedAvailabilityDelayDays: 30 },
      brandedBalance: { expiryDays: 30 },
      offer: { cashbackRateBps: 300, brandedRateBps: 200 },
    });
    assert.equal((await estimate(10_000)).estimatedRewardMinor, 300);
    const earned = await purchase(10_000);
    assert.deepEqual([earned.status, earned.earned, earned.grants.length], ['matched', 300, 0]);
  });

  it('still earns the branded rate when the issuer’s delay is shorter than the expiry', async () => {
    const { estimate, purchase } = await setUp({
      settings: { brandedAvailabilityDelayDays: 29 },
      brandedBalance: { expiryDays: 30 },
      offer: { cashbackRateBps: 300, brandedRateBps: 200 },
    });
    assert.equal((await estimate(10_000)).estimatedRewardMinor, 500);
    const earned = await purchase(10_000);
    assert.deepEqual([earned.status, earned.earned, earned.grants.map((g) => g.amountMinor)], ['matched', 500, [200n]]);
    const grant = earned.grants[0];
    assert.equal(
      grant.availableAt.getTime() - earned.createdAt,
      29 * 86_400_000,
      'available the issuer’s delay after the purchase',
    );
  });
});

const pickEstimate = (b: any) => ({
  eligible: b.eligible,
  reasons: b.reasons,
  winningOfferId: b.winningOfferId,
  estimatedRewardMinor: b.estimatedRewardMinor,
});
