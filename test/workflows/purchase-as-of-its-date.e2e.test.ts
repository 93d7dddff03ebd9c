// A purchase is decided as of its own date on the issuer's clock (API.md, Ingestion;
// docs/decisions/0034-a-purchase-decided-as-of-its-date.md): the branded balance it may spend and
// its grant's availableAt and expiresAt do not depend on when it is processed. The same purchase
// is processed on time for one sandbox issuer and three days late for another (its settlement
// held while that issuer's clock moves), on the real API, worker, PostgreSQL and Temporal, and
// the two outcomes are compared field by field.
import assert from 'node:assert/strict';
import { startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { DAY_MS } from '../helpers/catalogue';
import { activate, groupWithCard, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';

const HOUR_MS = 3_600_000;

/** Holds the settle step of the next purchase handed to it until released. */
class SettlementGate {
  private holding = false;
  private reached?: () => void;
  private release?: () => void;

  /** Arms the gate; resolves when a settlement has reached it. */
  arm(): Promise<void> {
    this.holding = true;
    return new Promise((resolve) => (this.reached = resolve));
  }

  open(): void {
    this.holding = false;
    this.release?.();
  }

  async beforeActivity(name: string): Promise<void> {
    if (name !== 'settleTransaction' || !this.holding) return;
    const released = new Promise<void>((resolve) => (this.release = resolve));
    this.reached?.();
    await released;
  }
}

describe('a purchase decided as of its own date', function () {
  this.timeout(180_000);
  const gate = new SettlementGate();
  let stack: Stack;
  let merchant: any;

  before(async () => {
    stack = await startStack({ faults: { beforeActivity: (name) => gate.beforeActivity(name) } });
    // Branded balance without a spend minimum, available 2 days after the purchase.
    ({ merchant } = await merchantWithOffer(stack.app, {
      brandedBalance: { availabilityDelayDays: 2, expiryDays: 30 },
      offer: { cashbackRateBps: 500, brandedRateBps: 300 },
    }));
  });
  after(() => stack?.stop());

  /** A sandbox issuer of its own (its own clock) whose group has activated the merchant. */
  async function sandboxGroup() {
    const issuer = await issuerWith(stack.app, { environment: 'sandbox' });
    const { group, card } = await groupWithCard(issuer);
    await activate(issuer, group.id, merchant.id);
    return { issuer, group, card };
  }

  const clockNow = async (issuer: TestIssuer) => (await issuer.call('GET', '/api/v2/sandbox/clock')).body.now as string;
  const advance = async (issuer: TestIssuer, body: { days?: number; hours?: number }) => {
    const res = await issuer.call('POST', '/api/v2/sandbox/clock/advance', body);
    assert.equal(res.status, 200, res.text);
  };

  /** Sends a $100 purchase dated `createdAt`; returns its txn_ id once stored. */
  async function purchase(issuer: TestIssuer, card: CardRef, createdAt: string): Promise<string> {
    const event = settledEvent(card, { amount: 10_000, merchantId: merchant.id, createdAt, settledAt: createdAt });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    return row.id;
  }

  /** What the purchase's outcome is, relative to its own date so that two issuers' clocks compare. */
  async function outcome(issuer: TestIssuer, chgId: string, txnId: string, createdAt: string) {
    const detail = (await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${txnId}/reward-detail`)).body;
    const trace = (await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${txnId}/match-trace`)).body.trace;
    const grants = await stack.db.rewardGrant.findMany({ where: { sourceTransactionId: txnId } });
    const from = Date.parse(createdAt);
    return {
      status: detail.status,
      earnedAmountMinor: detail.earnedAmountMinor,
      spentAmountMinor: detail.spentAmountMinor,
      grants: grants.map((g) => ({
        amountMinor: g.amountMinor,
        availableAfterMs: g.availableAt.getTime() - from,
        expiresAfterMs: g.expiresAt.getTime() - from,
      })),
      decidedAsOf: Date.parse(trace.decidedAsOf) - from,
      arithmetic: trace.arithmetic,
      spend: trace.spend,
      // Condition details name instants (activation, the purchase's date), which differ by issuer.
      earn: {
        ...trace.earn,
        offers: trace.earn.offers.map((o: any) => ({
          ...o,
          conditions: o.conditions.map((c: any) => [c.name, c.passed]),
        })),
      },
    };
  }

  it('spends, earns and dates its grant the same when processed three days late', async () => {
    const onTime = await sandboxGroup();
    const late = await sandboxGroup();
    const runs = [] as Array<{ txnId: string; createdAt: string }>;
    for (const [who, { issuer, group, card }] of [
      ['on time', onTime],
      ['late', late],
    ] as const) {
      // P1 earns a grant available two days after it.
      const p1 = await purchase(issuer, card, await clockNow(issuer));
      await stack.waitForStatus(p1, ['matched']);
      // Twenty hours later P2: P1's grant is not available at P2's date.
      await advance(issuer, { hours: 20 });
      const createdAt = await clockNow(issuer);
      if (who === 'on time') {
        const txnId = await purchase(issuer, card, createdAt);
        await stack.waitForStatus(txnId, ['matched']);
        runs.push({ txnId, createdAt });
      } else {
        // P2's settlement is held while the issuer's clock moves three days on, past P1's availability.
        const reached = gate.arm();
        const txnId = await purchase(issuer, card, createdAt);
        await reached;
        await advance(issuer, { days: 3 });
        gate.open();
        await stack.waitForStatus(txnId, ['matched']);
        runs.push({ txnId, createdAt });
      }
      assert.ok(group.id);
    }
    const [a, b] = [
      await outcome(onTime.issuer, onTime.group.id, runs[0].txnId, runs[0].createdAt),
      await outcome(late.issuer, late.group.id, runs[1].txnId, runs[1].createdAt),
    ];
    // On time: nothing to spend yet (P1's grant waits until 48 h), 5% + 3% of $100 earned.
    assert.equal(a.spentAmountMinor, 0);
    assert.equal(a.earnedAmountMinor, 800);
    assert.deepEqual(a.grants, [{ amountMinor: 300n, availableAfterMs: 2 * DAY_MS, expiresAfterMs: 30 * DAY_MS }]);
    assert.equal(a.decidedAsOf, 0);
    // Late: the same, field by field.
    assert.deepEqual(b, a);
    // The late run really was processed three days on: its trace says when.
    const lateTrace = (
      await late.issuer.call('GET', `/api/v2/chg/${late.group.id}/transaction/${runs[1].txnId}/match-trace`)
    ).body.trace;
    assert.ok(Date.parse(lateTrace.evaluatedAt) - Date.parse(runs[1].createdAt) >= 3 * DAY_MS - HOUR_MS);
    await assertLedgerHealthy(stack.db, onTime.issuer.id);
    await assertLedgerHealthy(stack.db, late.issuer.id);
  });
});
