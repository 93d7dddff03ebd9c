// Paying cashback out (API.md, "Cashback that is paid out"), on the real API, worker, PostgreSQL
// and Temporal: cashback on hold for the return window (the sandbox clock moves it), a payout run
// over several groups with a minimum in chunks, its items file equal to the ledger, the
// Idempotency-Key replaying the run, one run at a time, every group paid exactly once when chunks
// fail after their commit, a single group's payout, the webhooks verified with the standardwebhooks
// library, and another issuer's payouts and groups answering 404.
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, type TestIssuer } from '../helpers/app';
import { settledEvent } from '../helpers/events';
import { activate, groupWithCard, issuerWith, merchantWithOffer } from '../helpers/scenario';
import { assertLedgerHealthy } from '../helpers/ledger';
import { insertEndpoint, startReceiver, storedSecrets, waitFor, type Receiver } from '../helpers/webhooks';
import { fromDbMinor } from '../../core/ledger';

const CHUNK_GROUPS = 2;

describe('paying cashback out', function () {
  this.timeout(240_000);
  let stack: Stack;
  let merchant: any;
  let receiver: Receiver;
  /** Chunks to fail once after their commit (by the count of chunk calls), as a worker killed then would. */
  const crashAfterChunks = new Set<number>();
  let chunkCalls = 0;

  before(async () => {
    stack = await startStack({
      settings: { payoutChunkGroups: CHUNK_GROUPS },
      faults: {
        afterCommit: (activity) => {
          if (activity !== 'payOutChunk') return;
          chunkCalls += 1;
          if (crashAfterChunks.delete(chunkCalls)) throw new Error(`worker lost after chunk call ${chunkCalls}`);
        },
      },
    });
    receiver = await startReceiver();
    ({ merchant } = await merchantWithOffer(stack.app, { offer: { cashbackRateBps: 1000 } }));
  });
  after(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  /** A sandbox issuer; `holdDays` its cashbackHoldDays (30 unless given). */
  const sandboxIssuer = (holdDays?: number): Promise<TestIssuer> =>
    issuerWith(stack.app, {
      environment: 'sandbox',
      ...(holdDays !== undefined && { settings: { cashbackHoldDays: holdDays } }),
    });

  /** A group whose purchase (10 x `cashbackMinor`, 10 % back) was processed; its chg_ id. */
  async function groupWithCashback(issuer: TestIssuer, cashbackMinor: number): Promise<string> {
    const { group, card } = await groupWithCard(issuer);
    await activate(issuer, group.id, merchant.id);
    const now = (await issuer.call('GET', '/api/v2/sandbox/clock')).body.now;
    const event = settledEvent(card, {
      amount: cashbackMinor * 10,
      merchantId: merchant.id,
      createdAt: now,
      settledAt: now,
    });
    assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await stack.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: issuer.id, kind: 'settled', externalId: event.id },
    });
    await stack.waitForStatus(row.id, ['matched']);
    return group.id;
  }

  const cashbackOf = async (issuer: TestIssuer, chgId: string) =>
    (await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/summary`)).body.cashback;

  const postRun = (issuer: TestIssuer, body: Record<string, unknown>, key: string | null = randomUUID()) =>
    stack.app.request('POST', '/api/v2/payouts', {
      token: issuer.token,
      body,
      headers: key === null ? {} : { 'Idempotency-Key': key },
    });

  const payGroup = (issuer: TestIssuer, chgId: string, body: Record<string, unknown>, key = randomUUID()) =>
    stack.app.request('POST', `/api/v2/chg/${chgId}/payouts`, {
      token: issuer.token,
      body,
      headers: { 'Idempotency-Key': key },
    });

  async function finished(issuer: TestIssuer, payoutId: string) {
    return waitFor(`payout ${payoutId} to finish`, async () => {
      const res = await issuer.call('GET', `/api/v2/payouts/${payoutId}`);
      assert.equal(res.status, 200, res.text);
      return res.body.status === 'processing' ? undefined : res.body;
    });
  }

  it("keeps a purchase's cashback on hold for the return window, then makes it payable", async () => {
    const issuer = await sandboxIssuer();
    const chgId = await groupWithCashback(issuer, 1000);
    let cashback = await cashbackOf(issuer, chgId);
    assert.deepEqual([cashback.balanceMinor, cashback.onHoldMinor, cashback.payableMinor], [1000, 1000, 0]);
    assertError(await payGroup(issuer, chgId, {}), 409, 'insufficient_balance');
    const run = await postRun(issuer, {});
    assert.equal(run.status, 202, run.text);
    const done = await finished(issuer, run.body.id);
    assert.deepEqual([done.status, done.groupCount, done.totalMinor], ['completed', 0, 0], 'nothing on hold is paid');

    await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 29 });
    assert.equal((await cashbackOf(issuer, chgId)).onHoldMinor, 1000, 'still on hold a day before the window ends');
    await issuer.call('POST', '/api/v2/sandbox/clock/advance', { days: 1, hours: 1 });
    cashback = await cashbackOf(issuer, chgId);
    assert.deepEqual([cashback.onHoldMinor, cashback.payableMinor], [0, 1000]);
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('pays every group at or above the minimum in one run, with an items file equal to the ledger', async () => {
    const issuer = await sandboxIssuer(0);
    await insertEndpoint(stack.db, issuer.id, receiver.url, {
      enabledTypes: ['cashback_paid_out', 'payout_completed'],
    });
    const secret = (await storedSecrets(stack.db, issuer.id)).secret;
    const amounts = [100, 500, 1000, 2000, 50];
    const groups = [];
    for (const amount of amounts) groups.push({ chgId: await groupWithCashback(issuer, amount), amount });
    const key = randomUUID();
    const run = await postRun(issuer, { minimumMinor: 500, description: 'November cycle' }, key);
    assert.equal(run.status, 202, run.text);
    assert.deepEqual([run.body.kind, run.body.status, run.body.minimumMinor], ['run', 'processing', 500]);
    const done = await finished(issuer, run.body.id);
    assert.deepEqual([done.status, done.groupCount, done.totalMinor], ['completed', 3, 3500]);
    assert.ok(done.completedAt);

    // The same key answers the same run; another body under it is refused.
    const replay = await postRun(issuer, { minimumMinor: 500, description: 'November cycle' }, key);
    assert.equal(replay.status, 202, replay.text);
    assert.equal(replay.body.id, run.body.id);
    assert.equal(await stack.db.payout.count({ where: { issuerId: issuer.id } }), 1);
    assert.equal((await postRun(issuer, { minimumMinor: 1 }, key)).status, 409);

    for (const g of groups) {
      const cashback = await cashbackOf(issuer, g.chgId);
      const paid = g.amount >= 500 ? g.amount : 0;
      assert.deepEqual([cashback.paidOutMinor, cashback.payableMinor], [paid, g.amount - paid], g.chgId);
    }
    await checkItems(
      issuer,
      run.body.id,
      groups.filter((g) => g.amount >= 500),
    );

    // The run is searchable in the Temporal UI and completed.
    const handle = stack.client.workflow.getHandle(`payout/${issuer.id}/${run.body.id}`);
    const described = await handle.describe();
    assert.equal(described.status.name, 'COMPLETED');
    assert.deepEqual(described.searchAttributes.RewardsIssuerId, [issuer.id]);
    assert.deepEqual(described.searchAttributes.RewardsStatus, ['completed']);

    const verified = await waitFor('the payout webhooks', async () => {
      const bodies = receiver.requests
        .filter((r) => JSON.parse(r.body).data?.payoutId === run.body.id)
        .map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as any);
      return bodies.length === 4 ? bodies : undefined;
    });
    const paidOut = verified.filter((w) => w.type === 'cashback_paid_out');
    assert.deepEqual(
      paidOut.map((w) => w.data.amountMinor).sort((a, b) => a - b),
      [500, 1000, 2000],
    );
    const completed = verified.find((w) => w.type === 'payout_completed');
    assert.deepEqual(completed.data, { payoutId: run.body.id, groupCount: 3, currency: 'usd', totalMinor: 3500 });
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  /** The items file, NDJSON and CSV: a line per group paid, equal to its payout transfer, and a checksum. */
  async function checkItems(issuer: TestIssuer, payoutId: string, paid: Array<{ chgId: string; amount: number }>) {
    const ndjson = await stack.app.request('GET', `/api/v2/payouts/${payoutId}/items?format=ndjson`, {
      token: issuer.token,
    });
    assert.equal(ndjson.status, 200, ndjson.text);
    const lines = ndjson.text.trimEnd().split('\n');
    const items = lines.slice(0, -1).map((l) => JSON.parse(l));
    const checksum = JSON.parse(lines[lines.length - 1]);
    const transfers = await stack.db.ledgerTransfer.findMany({
      where: { issuerId: issuer.id, kind: 'payout_cashback', idempotencyKey: { startsWith: `payout:${payoutId}:` } },
    });
    assert.deepEqual(
      items.map((i) => [i.chgId, i.amountMinor]),
      [...paid].sort((a, b) => (a.chgId < b.chgId ? -1 : 1)).map((g) => [g.chgId, g.amount]),
    );
    for (const item of items) {
      const transfer = transfers.find((t) => t.rewardEventId === item.rewardEventId)!;
      assert.equal(fromDbMinor(transfer.amountMinor), item.amountMinor, 'a line is its ledger transfer');
      const group = await stack.db.cardholderGroup.findUniqueOrThrow({ where: { id: item.chgId } });
      assert.equal(item.externalId, group.externalId);
    }
    assert.equal(transfers.length, items.length);
    const body = lines.slice(0, -1).join('\n') + '\n';
    assert.deepEqual(
      [checksum.record, checksum.status, checksum.count, checksum.totalMinor],
      ['checksum', 'completed', paid.length, paid.reduce((s, g) => s + g.amount, 0)],
    );
    assert.equal(checksum.digest.value, createHash('sha256').update(body).digest('hex'));

    const csv = await stack.app.request('GET', `/api/v2/payouts/${payoutId}/items?format=csv`, { token: issuer.token });
    assert.equal(csv.status, 200, csv.text);
    const rows = csv.text.split('\r\n').filter((r) => r !== '');
    assert.equal(rows[0], 'chgId,externalId,amountMinor,currency,rewardEventId');
    assert.deepEqual(
      rows.slice(1, -1).map((r) => r.split(',')[0]),
      items.map((i) => i.chgId),
    );
    const csvBody = rows.slice(0, -1).join('\r\n') + '\r\n';
    assert.match(
      rows[rows.length - 1],
      new RegExp(`^#checksum payoutId=${payoutId} status=completed count=${paid.length} `),
    );
    assert.ok(rows[rows.length - 1].endsWith(`sha256=${createHash('sha256').update(csvBody).digest('hex')}`));
  }

  it('refuses a second run while one is processing (409 payout_in_progress), then runs it to the end', async () => {
    const issuer = await sandboxIssuer(0);
    const chgId = await groupWithCashback(issuer, 700);
    await stack.stopWorker();
    let workerBack = false;
    try {
      const first = await postRun(issuer, {});
      assert.equal(first.status, 202, first.text);
      const second = await postRun(issuer, {});
      assertError(second, 409, 'payout_in_progress');
      assert.equal(second.body.details.payoutId, first.body.id);
      await stack.startWorker();
      workerBack = true;
      const done = await finished(issuer, first.body.id);
      assert.deepEqual([done.groupCount, done.totalMinor], [1, 700]);
      assert.equal((await cashbackOf(issuer, chgId)).paidOutMinor, 700);
      const next = await postRun(issuer, {});
      assert.equal(next.status, 202, 'a new run once the first is done');
      await finished(issuer, next.body.id);
    } finally {
      if (!workerBack) await stack.startWorker();
    }
  });

  it('pays every group exactly once when chunks are lost after their commit, twice in one run', async () => {
    const issuer = await sandboxIssuer(0);
    const amounts = [300, 400, 500, 600, 700, 800, 900];
    const chgIds = [];
    for (const amount of amounts) chgIds.push(await groupWithCashback(issuer, amount));
    chunkCalls = 0;
    crashAfterChunks.add(2).add(4);
    const run = await postRun(issuer, {});
    assert.equal(run.status, 202, run.text);
    const done = await finished(issuer, run.body.id);
    assert.equal(crashAfterChunks.size, 0, 'both chunks were lost after their commit');
    assert.deepEqual([done.status, done.groupCount, done.totalMinor], ['completed', 7, 4200]);
    const items = await stack.db.payoutItem.groupBy({ by: ['chgId'], where: { payoutId: run.body.id }, _count: true });
    assert.deepEqual(items.map((i) => i._count).sort(), [1, 1, 1, 1, 1, 1, 1]);
    const transfers = await stack.db.ledgerTransfer.count({ where: { issuerId: issuer.id, kind: 'payout_cashback' } });
    assert.equal(transfers, 7, 'one payout transfer per group');
    for (const chgId of chgIds) assert.equal((await cashbackOf(issuer, chgId)).balanceMinor, 0);
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it('pays one group now: an amount, then the rest, then nothing more', async () => {
    const issuer = await sandboxIssuer(0);
    const chgId = await groupWithCashback(issuer, 1000);
    assertError(
      await stack.app.request('POST', `/api/v2/chg/${chgId}/payouts`, { token: issuer.token, body: {} }),
      400,
      'idempotency_key_required',
    );
    const key = randomUUID();
    const part = await payGroup(issuer, chgId, { amountMinor: 300 }, key);
    assert.equal(part.status, 201, part.text);
    assert.deepEqual([part.body.kind, part.body.status, part.body.totalMinor], ['group', 'completed', 300]);
    assert.equal((await payGroup(issuer, chgId, { amountMinor: 300 }, key)).body.id, part.body.id, 'replayed');
    assertError(await payGroup(issuer, chgId, { amountMinor: 701 }), 409, 'insufficient_balance');
    const rest = await payGroup(issuer, chgId, {});
    assert.equal(rest.status, 201, rest.text);
    assert.equal(rest.body.totalMinor, 700);
    assertError(await payGroup(issuer, chgId, {}), 409, 'insufficient_balance');
    const cashback = await cashbackOf(issuer, chgId);
    assert.deepEqual([cashback.paidOutMinor, cashback.balanceMinor], [1000, 0]);
    const activity = (await issuer.call('GET', `/api/v2/chg/${chgId}/rewards/activity`)).body.data;
    assert.deepEqual(
      activity.filter((r: any) => r.type === 'cashback_paid_out').map((r: any) => r.amountMinor),
      [-700, -300],
      'newest first, negative as the balance sees them',
    );
    const list = (await issuer.call('GET', '/api/v2/payouts?limit=1')).body;
    assert.equal(list.data[0].id, rest.body.id);
    assert.ok(list.nextCursor);
    await assertLedgerHealthy(stack.db, issuer.id);
  });

  it("answers 404 for another issuer's payout, its items and its groups, exactly as for missing ones", async () => {
    const issuer = await sandboxIssuer(0);
    const other = await sandboxIssuer(0);
    const chgId = await groupWithCashback(issuer, 500);
    const run = await postRun(issuer, {});
    await finished(issuer, run.body.id);
    assertError(await other.call('GET', `/api/v2/payouts/${run.body.id}`), 404, 'payout_not_found');
    assertError(await other.call('GET', `/api/v2/payouts/${run.body.id}/items`), 404, 'payout_not_found');
    assertError(await other.call('GET', `/api/v2/payouts/po_${randomUUID()}`), 404, 'payout_not_found');
    assertError(await payGroup(other, chgId, {}), 404, 'chg_not_found');
    assertError(await postRun(other, { chgIds: [chgId] }), 404, 'chg_not_found');
    assertError(await other.call('GET', `/api/v2/payouts/not-an-id`), 400, 'invalid_id');
    assert.equal((await cashbackOf(issuer, chgId)).paidOutMinor, 500);
  });
});
