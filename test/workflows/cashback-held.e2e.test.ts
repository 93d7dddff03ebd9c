// What a group has on hold, read from its running total (core/domain/cashback-held.ts), through
// the real API, hand-over, worker, PostgreSQL and Temporal dev server, for a sandbox issuer whose
// clock runs a year ahead of real time: settlements, a partial and a full refund, purchases whose
// window ends, the worker's sweep, a payout and a refund after it. After every step the summary's
// onHold and payable are what the sum over the group's holds gives at the issuer's now (the way
// they were read before the total), the total read at every instant around the holds' dates equals
// that sum, and the ledger invariants (the total's among them) hold.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import type { TestIssuer } from '../helpers/app';
import { settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { activate, groupWithCard, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { fromDbMinor } from '../../core/ledger';
import { splitCashback } from '../../core/rules/cashback';
import { heldAtSql, sweepMaturedHolds } from '../../core/domain/cashback-held';

const DAY_MS = 86_400_000;

describe('cashback on hold read from the running total (end to end, sandbox clock ahead)', function () {
  this.timeout(240_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack();
    ({ merchant } = await merchantWithOffer(stack.app, { offer: { cashbackRateBps: 500 } }));
    issuer = await issuerWith(stack.app, { environment: 'sandbox' });
    ({ group, card } = await groupWithCard(issuer));
    await activate(issuer, group.id, merchant.id);
  });
  after(() => stack?.stop());

  async function issuerNow(): Promise<string> {
    const res = await issuer.call('GET', '/api/v2/sandbox/clock');
    assert.equal(res.status, 200, res.text);
    return res.body.now;
  }

  async function advance(days: number): Promise<void> {
    const res = await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days });
    assert.equal(res.status, 200, res.text);
  }

  /** A settled event dated on the issuer's clock, processed; returns its stored id and external id. */
  async function settle(extra: Record<string, unknown>): Promise<{ id: string; externalId: string }> {
    const at = await issuerNow();
    const event = settledEvent(card, { merchantId: merchant.id, createdAt: at, settledAt: at, ...extra });
    const res = await issuer.call('POST', '/api/v1/incoming-txn', event);
    assert.equal(res.status, 204, res.text);
    const row = await storedEvent(stack.db, issuer.id, 'settled', event.id);
    assert.equal(await stack.waitForStatus(row.id, FINAL_STATUSES), 'matched');
    return { id: row.id, externalId: event.id };
  }

  const purchase = (amount: number) => settle({ amount });
  const refund = (p: { externalId: string }, amount: number) =>
    settle({ state: 'refunded', amount, relatedTransactionId: p.externalId });

  async function summaryCashback() {
    const res = await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`);
    assert.equal(res.status, 200, res.text);
    const c = res.body.cashback;
    return { balance: c.balanceMinor, onHold: c.onHoldMinor, payable: c.payableMinor };
  }

  /** The sum over the group's holds payable after `at`, as the summary read it before the total. */
  async function summedAt(at: Date): Promise<number> {
    const [row] = await stack.db.$queryRaw<Array<{ held: bigint }>>`
      SELECT coalesce(sum(remaining_minor), 0)::bigint AS held FROM cashback_hold
       WHERE issuer_id = ${issuer.id} AND chg_id = ${group.id} AND payable_at > ${at}`;
    return fromDbMinor(row.held);
  }

  async function totalAt(at: Date): Promise<number> {
    const rows = await stack.db.$queryRawUnsafe<Array<{ held: bigint }>>(
      `SELECT (${heldAtSql('$1::text', '$2::text', '$3::timestamptz')})::bigint AS held`,
      issuer.id,
      group.id,
      at,
    );
    return fromDbMinor(rows[0].held);
  }

  /**
   * The summary is what the sum over the holds gives at the issuer's now; the total agrees with
   * the sum at instants around every hold's date, far before and years after; the ledger is healthy.
   */
  async function assertAgrees(expected: { balance: number; onHold: number; payable: number }): Promise<void> {
    const now = new Date(await issuerNow());
    const summary = await summaryCashback();
    assert.deepEqual(summary, expected);
    assert.deepEqual(splitCashback(summary.balance, await summedAt(now)), {
      onHoldMinor: summary.onHold,
      payableMinor: summary.payable,
    });
    const dates = await stack.db.cashbackHold.findMany({ where: { issuerId: issuer.id, chgId: group.id } });
    const instants = [
      new Date(0),
      now,
      new Date(now.getTime() + 20 * 365 * DAY_MS),
      ...dates.flatMap((h) => [-1, 0, 1].map((ms) => new Date(h.payableAt.getTime() + ms))),
    ];
    for (const at of instants) assert.equal(await totalAt(at), await summedAt(at), `held at ${at.toISOString()}`);
    await assertLedgerHealthy(stack.db, issuer.id);
  }

  it('gives the figures the sum over the holds gives, through refunds, maturity, the sweep and a payout', async () => {
    // A year ahead of real time: a sweep by real time alone would take nothing out.
    await advance(365);
    const [a, b, c] = [await purchase(10_000), await purchase(4_000), await purchase(6_000)];
    await assertAgrees({ balance: 1000, onHold: 1000, payable: 0 });

    // A partial refund (half of A's 500 back) and a full one (all of B's 200).
    await refund(a, 5_000);
    await refund(b, 4_000);
    await assertAgrees({ balance: 550, onHold: 550, payable: 0 });

    // Ten days on, another purchase; 21 more and A..C's windows have ended, D's has not.
    await advance(10);
    const d = await purchase(2_000);
    await advance(21);
    await assertAgrees({ balance: 650, onHold: 100, payable: 550 });

    // The worker's sweep (by real time, each issuer at its own clock) takes A..C out of the total.
    const before = await stack.db.cashbackHeld.findUniqueOrThrow({
      where: { issuerId_chgId: { issuerId: issuer.id, chgId: group.id } },
    });
    assert.equal(fromDbMinor(before.heldMinor), 650, 'nothing swept yet: the readers subtract what matured');
    await sweepMaturedHolds(stack.db, { issuerId: issuer.id });
    const after = await stack.db.cashbackHeld.findUniqueOrThrow({
      where: { issuerId_chgId: { issuerId: issuer.id, chgId: group.id } },
    });
    assert.equal(fromDbMinor(after.heldMinor), 100);
    assert.ok(after.maturedThrough.getTime() >= Date.parse(await issuerNow()) - 60_000, 'swept to the issuer clock');
    await assertAgrees({ balance: 650, onHold: 100, payable: 550 });

    // A payout pays what is payable and nothing on hold.
    const paid = await stack.app.request('POST', `/api/v2/chg/${group.id}/payouts`, {
      token: issuer.token,
      body: {},
      headers: { 'Idempotency-Key': randomUUID() },
    });
    assert.equal(paid.status, 201, paid.text);
    assert.equal(paid.body.totalMinor, 550);
    await assertAgrees({ balance: 100, onHold: 100, payable: 0 });

    // A refund inside D's window takes half of its hold back; one of C after the payout (its hold
    // matured and swept) takes the rest of the balance, and the group owes the other 250.
    await refund(d, 1_000);
    await assertAgrees({ balance: 50, onHold: 50, payable: 0 });
    await refund(c, 6_000);
    await assertAgrees({ balance: 0, onHold: 0, payable: 0 });
    assert.equal((await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`)).body.cashback.owedMinor, 250);
  });
});
