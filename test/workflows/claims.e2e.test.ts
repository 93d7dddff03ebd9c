// Claims end to end through the real API, worker, PostgreSQL and Temporal dev server, for a
// production issuer (descriptor matching): each automatic outcome proven by the evidence the
// claim keeps (the purchase's match trace); a purchase whose descriptor the match rules miss
// goes to review with the reward the offer gives, an operator approves it learning the
// descriptor, the adjustment is posted, claim_resolved arrives signed, and the next purchase
// with that descriptor matches on its own; a worker dying after each commit still ends with
// one outcome, one adjustment and one claim_resolved.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { FINAL_STATUSES, startStack, type Stack } from '../helpers/stack';
import { assertError, OPERATOR_TOKEN, type TestIssuer, type TestResponse } from '../helpers/app';
import { DECISION_WAIT_MS } from '../../api/claims/store';
import { groupBody } from '../helpers/groups';
import { authEvent, settledEvent, type CardRef } from '../helpers/events';
import { activatedMerchant, issuerWith, merchantWithOffer, purchaseScenario } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { insertEndpoint, startReceiver, storedSecrets, waitFor, type Receiver } from '../helpers/webhooks';
import { FACT_WEBHOOK_DATA_SCHEMAS } from '../../core/webhooks/fact-webhooks';
import Ajv from 'ajv';
import { nameOperator } from '../helpers/operators';
import { runAdminCommand } from '../helpers/admin-cli';
import { claimCommands } from '../../scripts/admin/claim-commands';
import addFormats from 'ajv-formats';

const command = (name: string) => claimCommands.find((c) => c.name === name)!;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);

/** A descriptor word no other test's merchant matches (the catalogue is shared). */
const word = () =>
  Array.from(randomBytes(8))
    .map((b) => String.fromCharCode(65 + (b % 26)))
    .join('');

describe('claims (end to end, production issuer)', function () {
  this.timeout(300_000);
  let stack: Stack;
  let issuer: TestIssuer;
  let other: TestIssuer;
  let receiver: Receiver;
  let secret: string;
  let chgId: string;
  let card: CardRef;
  const brand = word();
  const strayBrand = word();
  let merchant: any;
  /** Activity names whose next commit is followed by a simulated death of the worker. */
  const dieAfterCommit = new Set<string>();

  before(async () => {
    stack = await startStack({
      faults: {
        afterCommit(activity) {
          if (dieAfterCommit.delete(activity)) throw new Error(`simulated worker death after ${activity} committed`);
        },
      },
    });
    receiver = await startReceiver();
    // Three merchants matched by descriptor, as a production issuer's events are, each 5 % back:
    // one activated, one activated with a minimum spend, one never activated.
    const coffee = await purchaseScenario(stack.app, {
      environment: 'production',
      matchRules: { descriptorPatterns: [`${brand} COFFEE`] },
      offer: { cashbackRateBps: 500 },
    });
    ({ issuer, card, merchant } = coffee);
    chgId = coffee.group.id;
    await activatedMerchant(stack.app, issuer, chgId, {
      matchRules: { descriptorPatterns: [`${brand} BAKERY`] },
      offer: { cashbackRateBps: 500, minSpendMinor: 5000 },
    });
    await merchantWithOffer(stack.app, {
      matchRules: { descriptorPatterns: [`${brand} BOOKS`] },
      offer: { cashbackRateBps: 500 },
    });
    other = await issuerWith(stack.app, { environment: 'production' });
    await insertEndpoint(stack.db, issuer.id, receiver.url, { enabledTypes: ['claim_resolved', 'reward_adjusted'] });
    secret = (await storedSecrets(stack.db, issuer.id)).secret;
  });
  after(async () => {
    if (stack) await assertLedgerHealthy(stack.db, issuer.id);
    await stack?.stop();
    await receiver?.close();
  });

  /** Ingests a settled purchase and waits for its processing; returns its txn_ id. */
  async function purchase(descriptor: string, overrides: Record<string, unknown> = {}): Promise<string> {
    const event = settledEvent(card, { merchantDescriptor: descriptor, amount: 2500, ...overrides });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const stored = await stack.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: issuer.id, kind: 'settled', externalId: event.id },
    });
    await stack.waitForStatus(stored.id, FINAL_STATUSES);
    return stored.id;
  }

  async function fileClaim(body: Record<string, unknown>) {
    const res = await issuer.call('POST', `/api/v2/chg/${chgId}/claims`, { reason: 'missing_reward', ...body });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.body.status, 'open');
    assert.equal(res.body.workflowId, `claim/${issuer.id}/${res.body.id}`);
    return res.body;
  }

  /** Waits until the claim leaves `open` (and, for final ones, its workflow completes). */
  async function decided(claimId: string, statuses = ['needs_review', 'approved', 'rejected']) {
    return waitFor(`claim ${claimId} decided`, async () => {
      const res = await issuer.call('GET', `/api/v2/chg/${chgId}/claims/${claimId}`);
      return statuses.includes(res.body.status) ? res.body : undefined;
    });
  }

  /** The claim_resolved webhooks received for a claim, each verified with the endpoint's secret. */
  function resolvedEvents(claimId: string) {
    return receiver.requests
      .map((r) => {
        new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
        return JSON.parse(r.body);
      })
      .filter((b) => b.type === 'claim_resolved' && b.data.claimId === claimId);
  }

  async function rejectedWith(claim: any, reasonCode: string) {
    const done = await decided(claim.id);
    assert.equal(done.status, 'rejected', JSON.stringify(done));
    assert.equal(done.reasonCode, reasonCode);
    const events = await waitFor(`claim_resolved of ${claim.id}`, async () => {
      const got = resolvedEvents(claim.id);
      return got.length > 0 ? got : undefined;
    });
    assert.equal(events.length, 1);
    assert.ok(ajv.validate(FACT_WEBHOOK_DATA_SCHEMAS.claim_resolved, events[0].data), JSON.stringify(ajv.errors));
    assert.deepEqual([events[0].data.outcome, events[0].data.reasonCode], ['rejected', reasonCode]);
    const handle = stack.client.workflow.getHandle(claim.workflowId);
    assert.equal((await handle.result()).status, 'rejected');
    return done;
  }

  it('rejects a purchase never received: transaction_not_received', async () => {
    const claim = await fileClaim({ externalId: `never-sent-${word()}` });
    const done = await rejectedWith(claim, 'transaction_not_received');
    assert.equal(done.evidence.transaction, null);
  });

  it('rejects a purchase rewarded as the rules say: already_rewarded, with the earn in its trace', async () => {
    const txnId = await purchase(`${brand} COFFEE OAKLAND CA`);
    const done = await rejectedWith(await fileClaim({ transactionId: txnId }), 'already_rewarded');
    assert.equal(done.evidence.matchTrace.outcome, 'matched');
    assert.equal(done.evidence.keptCashbackMinor, 125);
  });

  it('rejects already_rewarded for a purchase that spent branded balance: the rules earn on what is left', async () => {
    const { merchant: grocer } = await activatedMerchant(stack.app, issuer, chgId, {
      matchRules: { descriptorPatterns: [`${brand} GROCER`] },
      brandedBalance: true,
      offer: { cashbackRateBps: 500, brandedRateBps: 200 },
    });
    // $2 of branded balance at the merchant, available at once (an adjustment's grant is).
    const credit = await stack.app.request('POST', `/api/v2/chg/${chgId}/adjustments`, {
      token: issuer.token,
      headers: { 'Idempotency-Key': `grocer-credit-${word()}` },
      body: { balanceType: 'branded', amountMinor: 200, merchantId: grocer.id, reasonCode: 'goodwill' },
    });
    assert.equal(credit.status, 201, credit.text);

    // $100 that spends the $2 and earns on $98: 490 cashback and 196 branded.
    const txnId = await purchase(`${brand} GROCER SF`, { amount: 10_000 });
    const trace = (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: txnId } })).matchTrace as any;
    assert.deepEqual(
      [trace.arithmetic.spentMinor, trace.arithmetic.eligibleAmountMinor],
      [200, 9_800],
      JSON.stringify(trace.arithmetic),
    );
    const detail = (await issuer.call('GET', `/api/v2/chg/${chgId}/transaction/${txnId}/reward-detail`)).body;
    assert.deepEqual([detail.spentAmountMinor, detail.earnedAmountMinor], [200, 686]);

    for (const reason of ['missing_reward', 'wrong_amount']) {
      const done = await rejectedWith(await fileClaim({ transactionId: txnId, reason }), 'already_rewarded');
      assert.deepEqual([done.evidence.keptCashbackMinor, done.evidence.keptBrandedMinor], [490, 196]);
      assert.equal(done.evidence.rules.eligibleAmountMinor, 9_800);
    }
    assert.equal(await stack.db.adjustment.count({ where: { transactionId: txnId } }), 0);
  });

  it('rejects below the minimum spend and a merchant not activated, each reason from the match trace', async () => {
    const small = await purchase(`${brand} BAKERY`, { amount: 1000 });
    const belowMin = await rejectedWith(await fileClaim({ transactionId: small }), 'below_min_spend');
    assert.ok(belowMin.evidence.matchTrace.earn.reasons.includes('below_min_spend'));
    const books = await purchase(`${brand} BOOKS`);
    const notActivated = await rejectedWith(await fileClaim({ transactionId: books }), 'merchant_not_activated');
    assert.ok(notActivated.evidence.matchTrace.earn.reasons.includes('merchant_not_activated'));
  });

  it('rejects an unrecognised descriptor without a named merchant, a foreign currency and an unsettled authorization', async () => {
    const unknown = await purchase(`${strayBrand} NOWHERE`);
    const noMerchant = await rejectedWith(await fileClaim({ transactionId: unknown }), 'merchant_not_identified');
    assert.equal(noMerchant.evidence.matchTrace.merchantMatch.rule, 'none');
    const euros = await purchase(`${brand} COFFEE`, { currency: 'eur' });
    await rejectedWith(await fileClaim({ transactionId: euros }), 'currency_not_supported');
    const auth = authEvent(card, { merchantDescriptor: `${brand} COFFEE` });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-auth', auth)).status, 204);
    await rejectedWith(await fileClaim({ externalId: auth.id }), 'reward_pending');
  });

  it("holds an approval above the issuer's threshold until a second operator with support approves it", async () => {
    const patch = (approvalThresholdMinor: number) =>
      stack.app.operator('PATCH', `/admin/v1/issuers/${issuer.id}`, { approvalThresholdMinor });
    assert.equal((await patch(100)).body.approvalThresholdMinor, 100);
    try {
      const missed = await purchase(`${word().toUpperCase()} ROASTERY`);
      const claim = await fileClaim({ transactionId: missed, merchantId: merchant.id });
      assert.deepEqual((await decided(claim.id)).computedReward, { cashbackMinor: 125, brandedMinor: 0 });
      const held = await stack.app.operator('POST', `/admin/v1/claims/${claim.id}/approve`, {});
      assert.deepEqual(
        [held.status, held.body.reason, held.body.requiredRole],
        [202, 'claim_above_threshold', 'support'],
      );
      assert.equal((await decided(claim.id)).status, 'needs_review', 'nothing done');
      const support = await nameOperator(stack.app, ['support']);
      const approved = await support.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`);
      assert.equal(approved.status, 200, approved.text);
      assert.deepEqual([approved.body.result.statusCode, approved.body.result.body.status], [200, 'approved']);
      assert.equal(approved.body.result.body.adjustmentIds.length, 1);
    } finally {
      await patch(50_000);
    }
  });

  it('reviews a missed descriptor, approves it learning the descriptor, and the next purchase matches on its own', async () => {
    const descriptor = `${strayBrand} ROASTERY`;
    const missed = await purchase(descriptor);
    assert.equal(
      (await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: missed } })).rewardStatus,
      'not_matched',
    );
    const claim = await fileClaim({ transactionId: missed, merchantId: merchant.id, note: 'coffee at the new shop' });
    assertError(
      await issuer.call('POST', `/api/v2/chg/${chgId}/claims`, { transactionId: missed, reason: 'missing_reward' }),
      409,
      'claim_open',
    );
    const review = await decided(claim.id);
    assert.equal(review.status, 'needs_review');
    assert.equal(review.reasonCode, 'merchant_not_recognised');
    assert.deepEqual(review.computedReward, { cashbackMinor: 125, brandedMinor: 0 });
    const queue = await stack.app.operator('GET', `/admin/v1/claims?status=needs_review&issuerId=${issuer.id}`);
    assert.ok(queue.body.data.some((c: any) => c.id === claim.id));

    const before = (await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`)).body.cashback;
    const approved = await stack.app.operator('POST', `/admin/v1/claims/${claim.id}/approve`, {
      learnDescriptor: true,
    });
    assert.equal(approved.status, 200, approved.text);
    assert.equal(approved.body.status, 'approved');
    assert.equal(approved.body.adjustmentIds.length, 1);
    const adjustment = (await issuer.call('GET', `/api/v2/chg/${chgId}/adjustments/${approved.body.adjustmentIds[0]}`))
      .body;
    assert.deepEqual(
      [
        adjustment.balanceType,
        adjustment.amountMinor,
        adjustment.reasonCode,
        adjustment.transactionId,
        adjustment.claimId,
      ],
      ['cashback', 125, 'missing_reward', missed, claim.id],
    );
    const after = (await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`)).body.cashback;
    assert.equal(after.balanceMinor - before.balanceMinor, 125);
    assert.equal(after.adjustedMinor - before.adjustedMinor, 125);
    const [resolved] = await waitFor('claim_resolved', async () => {
      const got = resolvedEvents(claim.id);
      return got.length > 0 ? got : undefined;
    });
    assert.deepEqual(
      [resolved.data.outcome, resolved.data.reasonCode, resolved.data.adjustmentId],
      ['approved', 'operator_approved', adjustment.id],
    );
    assertError(
      await stack.app.operator('POST', `/admin/v1/claims/${claim.id}/approve`, {}),
      409,
      'claim_not_in_review',
    );

    const next = await purchase(`${descriptor} #2 OAKLAND`);
    const matched = await stack.db.ingestedEvent.findUniqueOrThrow({ where: { id: next } });
    assert.deepEqual([matched.rewardStatus, matched.merchantId], ['matched', merchant.id]);
    const audit = await stack.app.operator('GET', `/admin/v1/audit-log?limit=200`);
    assert.ok(audit.body.data.some((e: any) => e.action === 'merchant.learn_match_rule' && e.targetId === merchant.id));
  });

  it('lets an operator reject a claim in review with a reason, from the admin CLI', async () => {
    const missed = await purchase(`${word()} CAFE`);
    const claim = await fileClaim({ transactionId: missed, merchantId: merchant.id });
    assert.equal((await decided(claim.id)).status, 'needs_review');
    const [queue] = (await runAdminCommand(stack, command('claim:queue'), ['--issuer', issuer.id])) as any[][];
    assert.ok(queue.some((c) => c.id === claim.id && c.computedReward.cashbackMinor === 125));
    const [rejected] = (await runAdminCommand(stack, command('claim:reject'), [
      claim.id,
      'insufficient_evidence',
      '--note',
      'receipt shows another shop',
    ])) as any[];
    assert.deepEqual([rejected.status, rejected.resolvedBy], ['rejected', 'cli:test']);
    await rejectedWith(claim, 'insufficient_evidence');
    const audit = await stack.db.operatorAuditLog.findFirst({ where: { action: 'claim.reject', targetId: claim.id } });
    assert.equal(audit?.actor, 'cli:test');
  });

  it('survives a worker dying after each commit: one outcome, one adjustment, one claim_resolved', async () => {
    const missed = await purchase(`${word()} KIOSK`);
    dieAfterCommit.add('decideClaim');
    const claim = await fileClaim({ transactionId: missed, merchantId: merchant.id });
    assert.equal((await decided(claim.id)).status, 'needs_review');
    assert.ok(!dieAfterCommit.has('decideClaim'), 'the decision was retried after its commit');
    dieAfterCommit.add('resolveClaim');
    const approved = await stack.app.operator('POST', `/admin/v1/claims/${claim.id}/approve`, {});
    assert.equal(approved.status, 200, approved.text);
    assert.ok(!dieAfterCommit.has('resolveClaim'));
    assert.equal(await stack.db.adjustment.count({ where: { claimId: claim.id } }), 1);
    await waitFor('claim_resolved', async () => (resolvedEvents(claim.id).length > 0 ? true : undefined));
    assert.equal(await stack.db.webhook.count({ where: { idempotencyKey: `claim_resolved:${claim.id}` } }), 1);
    assert.equal(resolvedEvents(claim.id).length, 1);
  });

  /** Purchases with descriptors no rule matches, each claimed at `merchant`: claims in review. */
  async function claimsInReview(count: number): Promise<any[]> {
    const events = Array.from({ length: count }, () =>
      settledEvent(card, { merchantDescriptor: `${word()} STALL`, amount: 2500 }),
    );
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', events)).status, 204);
    const rows = await stack.db.ingestedEvent.findMany({
      where: { issuerId: issuer.id, kind: 'settled', externalId: { in: events.map((e) => e.id) } },
    });
    for (const row of rows) await stack.waitForStatus(row.id, FINAL_STATUSES);
    const claims = [];
    for (const row of rows) claims.push(await fileClaim({ transactionId: row.id, merchantId: merchant.id }));
    for (const claim of claims) assert.equal((await decided(claim.id)).status, 'needs_review');
    return claims;
  }

  /** An operator's decision sent with an Idempotency-Key. */
  const decide = (claimId: string, action: 'approve' | 'reject', body: object, key = `decide-${word()}`) =>
    stack.app.request('POST', `/admin/v1/claims/${claimId}/${action}`, {
      token: OPERATOR_TOKEN,
      body,
      headers: { 'Idempotency-Key': key },
    });

  it('lets exactly one of racing approve and reject calls decide; every other gets 409 claim_not_in_review', async () => {
    const claims = await claimsInReview(12);
    const races = await Promise.all(
      claims.map((claim) =>
        Promise.all([
          decide(claim.id, 'approve', {}),
          decide(claim.id, 'reject', { reasonCode: 'duplicate' }),
          decide(claim.id, 'approve', { amountMinor: 50 }),
        ]),
      ),
    );
    for (const [i, answers] of races.entries()) {
      const claim = claims[i];
      const won = answers.filter((a) => a.status === 200);
      assert.equal(won.length, 1, `claim ${claim.id}: ${answers.map((a) => `${a.status} ${a.text}`).join(' | ')}`);
      for (const lost of answers.filter((a) => a.status !== 200)) assertError(lost, 409, 'claim_not_in_review');
      const winner = won[0].body;
      const stored = (await stack.app.operator('GET', `/admin/v1/claims/${claim.id}`)).body;
      assert.deepEqual([stored.status, stored.reasonCode], [winner.status, winner.reasonCode]);
      const adjustments = await stack.db.adjustment.findMany({ where: { claimId: claim.id } });
      if (winner.status === 'approved') {
        const paid = answers.indexOf(won[0]) === 0 ? 125 : 50;
        assert.deepEqual(
          adjustments.map((a) => Number(a.amountMinor)),
          [paid],
        );
        assert.deepEqual(winner.adjustmentIds, [adjustments[0].id]);
      } else {
        assert.deepEqual([winner.status, winner.reasonCode, adjustments.length], ['rejected', 'duplicate', 0]);
      }
      assert.equal(await stack.db.webhook.count({ where: { idempotencyKey: `claim_resolved:${claim.id}` } }), 1);
      assert.equal((await stack.client.workflow.getHandle(claim.workflowId).result()).status, winner.status);
    }
  });

  it('refuses an approval the ledger cannot post with its own reason, the claim still in review', async () => {
    const [claim] = await claimsInReview(1);
    const refused = await decide(claim.id, 'approve', { amountMinor: 50, balanceType: 'branded' });
    assertError(refused, 409, 'branded_not_enabled');
    assert.equal((await stack.app.operator('GET', `/admin/v1/claims/${claim.id}`)).body.status, 'needs_review');
    const approved = await decide(claim.id, 'approve', {});
    assert.equal(approved.status, 200, approved.text);
  });

  it('answers a decision within a bounded time while no worker runs: 503, nothing done; its key then applies it once', async () => {
    const [toApprove, toReject] = await claimsInReview(2);
    const approveKey = `approve-${word()}`;
    // Far more than the API's wait: an answer that takes longer counts as none.
    const bound = DECISION_WAIT_MS + 10_000;
    const within = (answer: Promise<TestResponse>) =>
      Promise.race([answer, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), bound).unref())]);
    await stack.stopWorker();
    let answers: Array<TestResponse | undefined>;
    const startedAt = performance.now();
    try {
      answers = await Promise.all([
        within(decide(toApprove.id, 'approve', {}, approveKey)),
        within(decide(toReject.id, 'reject', { reasonCode: 'other' })),
      ]);
    } finally {
      await stack.startWorker();
    }
    const tookMs = performance.now() - startedAt;
    for (const answer of answers) {
      assert.ok(answer, `no answer within ${bound} ms while no worker ran`);
      assertError(answer, 503, 'workflow_engine_unavailable');
      assert.ok(Number(answer.headers.get('retry-after')) > 0, 'Retry-After');
    }
    assert.ok(tookMs >= DECISION_WAIT_MS, `answered after ${Math.round(tookMs)} ms, before the wait was over`);
    for (const claim of [toApprove, toReject]) {
      assert.equal((await stack.db.claim.findUniqueOrThrow({ where: { id: claim.id } })).status, 'needs_review');
      assert.equal(await stack.db.adjustment.count({ where: { claimId: claim.id } }), 0);
    }

    // A worker is back: the retry under the same key decides (a 503 releases its key), once.
    let approved: TestResponse | undefined;
    for (let attempt = 0; attempt < 6 && approved?.status !== 200; attempt++) {
      approved = await decide(toApprove.id, 'approve', {}, approveKey);
      if (approved.status !== 200) assertError(approved, 503, 'workflow_engine_unavailable');
    }
    assert.equal(approved!.status, 200, approved!.text);
    assert.equal(approved!.body.status, 'approved');
    const replayed = await decide(toApprove.id, 'approve', {}, approveKey);
    assert.deepEqual([replayed.status, replayed.headers.get('idempotent-replayed')], [200, 'true']);
    assert.deepEqual(replayed.body, approved!.body);
    assert.equal(await stack.db.adjustment.count({ where: { claimId: toApprove.id } }), 1);

    // The rejection answered 503 was never applied, not even once a worker came back: the claim
    // is still in review, and a new decision decides it.
    let later: TestResponse | undefined;
    for (let attempt = 0; attempt < 6 && later?.status !== 200; attempt++) {
      later = await decide(toReject.id, 'approve', {});
      if (later.status !== 200) assertError(later, 503, 'workflow_engine_unavailable');
    }
    assert.deepEqual([later!.status, later!.body.status], [200, 'approved'], later!.text);
    assert.equal(await stack.db.webhook.count({ where: { idempotencyKey: `claim_resolved:${toReject.id}` } }), 1);
  });

  it("answers 404 for another issuer's claims and transactions, exactly like missing ones", async () => {
    const mine = (await issuer.call('GET', `/api/v2/chg/${chgId}/claims`)).body.data[0];
    const theirs = (await other.call('POST', '/api/v2/chg', groupBody())).body.id;
    assertError(await other.call('GET', `/api/v2/chg/${chgId}/claims`), 404, 'chg_not_found');
    assertError(await other.call('GET', `/api/v2/chg/${theirs}/claims/${mine.id}`), 404, 'claim_not_found');
    assertError(
      await other.call('POST', `/api/v2/chg/${theirs}/claims`, {
        transactionId: mine.transactionId,
        reason: 'missing_reward',
      }),
      404,
      'transaction_not_found',
    );
  });
});
