// Guarantees of the lifecycle beyond the happy path: crash safety, concurrency, the
// sweeper, and a match trace that names the condition that failed.
import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import { FINAL_STATUSES, startStack, TEST_HANDOVER_MAX_IN_FLIGHT, type Stack } from '../helpers/stack';
import { startTestApp, type TestIssuer } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent, storedEvent, type CardRef } from '../helpers/events';
import { daysFromNow } from '../helpers/catalogue';
import { activate, activatedMerchant, purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { createSweepActivities } from '../../activities/sweeper';

describe('TransactionLifecycle guarantees', function () {
  this.timeout(180_000);
  // Armed by a test: the next settlement activity fails right after its commit, once.
  let crashNextSettlement = false;
  const crashed: string[] = [];
  let stack: Stack;
  let issuer: TestIssuer;
  let group: any;
  let card: CardRef;
  let merchant: any;

  before(async () => {
    stack = await startStack({
      faults: {
        afterCommit(activity, eventId) {
          if (activity === 'settleTransaction' && crashNextSettlement) {
            crashNextSettlement = false;
            crashed.push(eventId);
            throw new Error('simulated crash after the commit');
          }
        },
      },
    });
    ({ issuer, group, card, merchant } = await purchaseScenario(stack.app, { offer: { cashbackRateBps: 300 } }));
  });
  after(() => stack.stop());
  afterEach(() => assertLedgerHealthy(stack.db, issuer.id));

  const storedId = async (externalId: string) => (await storedEvent(stack.db, issuer.id, 'settled', externalId)).id;

  it('posts exactly once when the settlement activity fails after its commit and is retried', async () => {
    const event = settledEvent(card, { amount: 5_000, merchantId: merchant.id });
    crashNextSettlement = true;
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const id = await storedId(event.id);
    assert.equal(await stack.waitForStatus(id, FINAL_STATUSES), 'matched');
    assert.deepEqual(crashed, [id], 'the first attempt failed after committing');
    const transfers = await stack.db.ledgerTransfer.findMany({ where: { transactionId: id } });
    assert.equal(transfers.length, 1);
    assert.equal(transfers[0].amountMinor, 150n);
    assert.equal(await stack.db.rewardEvent.count({ where: { transactionId: id } }), 1);
  });

  it('yields 200 stored events, exactly 200 workflow runs and one posting each when 5 clients send the same 200 at once', async () => {
    const prefix = `five-${randomUUID()}-`;
    const batch = Array.from({ length: 200 }, (_, i) =>
      settledEvent(card, { id: `${prefix}${i}`, amount: 1_000, merchantId: merchant.id }),
    );
    const results = await Promise.all(
      Array.from({ length: 5 }, () => issuer.call('POST', '/api/v1/incoming-txn', batch)),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      [204, 204, 204, 204, 204],
    );
    const rows = await stack.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id, externalId: { in: batch.map((e) => e.id) } },
    });
    assert.equal(rows.length, 200);
    for (const row of rows) await stack.waitForStatus(row.id, FINAL_STATUSES, 120_000);
    const transfers = await stack.db.ledgerTransfer.groupBy({
      by: ['transactionId'],
      where: { transactionId: { in: rows.map((r) => r.id) } },
      _count: true,
    });
    assert.equal(transfers.length, 200);
    assert.ok(transfers.every((t) => t._count === 1));
    // 3% of 1,000 each: 30, and 6,000 in all, all of it cashback.
    const posted = await stack.db.ledgerTransfer.findMany({
      where: { transactionId: { in: rows.map((r) => r.id) } },
      select: { kind: true, amountMinor: true },
    });
    assert.ok(
      posted.every((t) => t.kind === 'earn_cashback' && t.amountMinor === 30n),
      JSON.stringify(posted.slice(0, 3), (_, v) => (typeof v === 'bigint' ? Number(v) : v)),
    );
    // Exactly one run per purchase: visibility is eventually consistent, so wait until it has
    // caught up with 200, then give a duplicate a moment to show.
    const query = `TaskQueue = "${stack.taskQueue}" AND WorkflowId STARTS_WITH "txn/${issuer.id}/${prefix}"`;
    for (let i = 0; i < 100 && (await stack.client.workflow.count(query)).count < 200; i++)
      await new Promise((r) => setTimeout(r, 200));
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await stack.client.workflow.count(query)).count, 200);
  });

  it('hands over, through the sweeper, an event accepted while no hand-over ran', async () => {
    const quiet = await startTestApp({ db: stack.db }); // no hand-over configured: like Temporal being down
    const event = settledEvent(card, { amount: 2_000, merchantId: merchant.id });
    assert.equal(
      (await quiet.request('POST', '/api/v1/incoming-txn', { token: issuer.token, body: event })).status,
      204,
    );
    await quiet.close();
    const id = await storedId(event.id);
    assert.equal(await stack.db.handoverPending.count({ where: { eventId: id } }), 1, 'queued for the sweeper');
    const sweep = createSweepActivities({
      db: stack.db,
      clock: { now: () => new Date(Date.now() + 60_000) },
      temporal: stack.engine,
      handoverMaxInFlight: TEST_HANDOVER_MAX_IN_FLIGHT,
    });
    const swept = await sweep.sweepHandovers({ olderThanMs: 30_000, limit: 1000 });
    assert.ok(swept.handedOver >= 1);
    assert.equal(await stack.waitForStatus(id, FINAL_STATUSES), 'matched');
    const posted = await stack.db.ledgerTransfer.findMany({ where: { transactionId: id } });
    assert.deepEqual(
      posted.map((t) => [t.kind, t.amountMinor]),
      [['earn_cashback', 60n]],
      '3% of 2,000, once',
    );
    await stack.waitUntilReleased([id]);
  });

  it('shows the counters of the scenarios above at /metrics', async () => {
    const res = await stack.app.request('GET', '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    const value = (pattern: RegExp) => Number(pattern.exec(res.text)?.[1] ?? NaN);
    assert.ok(
      value(/rewards_http_requests_total\{method="POST",route="\/api\/v1\/incoming-txn",status="204"\} (\d+)/) >= 6,
    );
    assert.ok(value(/rewards_events_ingested_total\{kind="settled",outcome="accepted"\} (\d+)/) >= 200);
    assert.ok(value(/rewards_ledger_postings_total\{kind="earn_cashback"\} (\d+)/) >= 200);
    assert.ok(value(/rewards_lifecycle_outcomes_total\{step="settleTransaction",status="matched"\} (\d+)/) >= 200);
    assert.ok(
      value(/rewards_activity_failures_total\{activity="settleTransaction"\} (\d+)/) >= 1,
      'the simulated crash was counted',
    );
    assert.match(
      res.text,
      /rewards_http_request_duration_seconds_bucket\{le="0.1",method="POST",route="\/api\/v1\/incoming-txn",status="204"\}/,
    );
  });

  describe('match trace of not_matched purchases', () => {
    async function traceOf(chgId: string, cardRef: CardRef, overrides: Record<string, unknown>) {
      const event = settledEvent(cardRef, overrides);
      assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
      const id = await storedId(event.id);
      assert.equal(await stack.waitForStatus(id, FINAL_STATUSES), 'not_matched');
      const res = await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${id}/match-trace`);
      assert.equal(res.status, 200);
      return res.body.trace;
    }
    const failed = (trace: any) =>
      trace.earn.offers.flatMap((o: any) => o.conditions.filter((c: any) => !c.passed).map((c: any) => c.name));

    /** A merchant activated for the group, with a 4 % offer on these terms. */
    const merchantWith = async (offer: Record<string, unknown>) =>
      (await activatedMerchant(stack.app, issuer, group.id, { offer: { cashbackRateBps: 400, ...offer } })).merchant;

    it('names the offer window for a purchase outside it', async () => {
      const m = await merchantWith({ startsAt: daysFromNow(5) });
      const trace = await traceOf(group.id, card, { merchantId: m.id });
      assert.deepEqual(failed(trace), ['offer_window']);
      assert.deepEqual(trace.earn.reasons, ['no_active_offer']);
    });

    it('names the minimum spend', async () => {
      const m = await merchantWith({ startsAt: daysFromNow(-1), minSpendMinor: 5_000 });
      const trace = await traceOf(group.id, card, { merchantId: m.id, amount: 4_999 });
      assert.deepEqual(failed(trace), ['min_spend']);
      assert.deepEqual(trace.earn.reasons, ['below_min_spend']);
    });

    it('names the MCC restriction', async () => {
      const m = await merchantWith({ startsAt: daysFromNow(-1), mccs: ['5411'] });
      const trace = await traceOf(group.id, card, { merchantId: m.id, mcc: '5814' });
      assert.deepEqual(failed(trace), ['mcc_allowed']);
    });

    it('names an exhausted per-group cap', async () => {
      const m = await merchantWith({ startsAt: daysFromNow(-1), maxRewardPerChgMinor: 100 });
      const first = settledEvent(card, { merchantId: m.id, amount: 10_000 });
      await issuer.call('POST', '/api/v1/incoming-txn', first);
      assert.equal(await stack.waitForStatus(await storedId(first.id), FINAL_STATUSES), 'matched');
      const trace = await traceOf(group.id, card, { merchantId: m.id, amount: 10_000 });
      assert.deepEqual(failed(trace), ['cap_not_exhausted']);
      assert.deepEqual(trace.earn.reasons, ['offer_cap_reached']);
    });

    it('names a deactivated card and a deactivated group', async () => {
      const own = (
        await issuer.call(
          'POST',
          '/api/v2/chg',
          groupBody({
            cardholders: [
              {
                externalId: `c-${randomUUID()}`,
                cards: [
                  { externalId: `k1-${randomUUID()}`, last4: '1111', network: 'visa' },
                  { externalId: `k2-${randomUUID()}`, last4: '2222', network: 'visa' },
                ],
              },
            ],
          }),
        )
      ).body;
      await activate(issuer, own.id, merchant.id);
      await issuer.call(
        'DELETE',
        `/api/v2/chg/${own.id}/cardholder/${own.cardholders[0].id}/card/${own.cardholders[0].cards[1].id}`,
      );
      const cardTrace = await traceOf(own.id, cardOf(own, 0, 1), { merchantId: merchant.id });
      assert.deepEqual(failed(cardTrace), ['card_active']);
      await issuer.call('DELETE', `/api/v2/chg/${own.id}`);
      const groupTrace = await traceOf(own.id, cardOf(own, 0, 0), { merchantId: merchant.id });
      assert.ok(failed(groupTrace).includes('chg_active'), JSON.stringify(failed(groupTrace)));
    });

    it('names the missing merchant match', async () => {
      // A descriptor no catalogue rule matches: sandbox events without an mp_ id are matched by the rules.
      const trace = await traceOf(group.id, card, { merchantId: undefined, merchantDescriptor: 'NO SUCH SHOP 4711' });
      assert.equal(trace.merchantMatch.rule, 'none');
      assert.equal(trace.earn, null);
    });
  });
});
