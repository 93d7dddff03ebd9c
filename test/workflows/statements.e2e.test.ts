// Merchant statements (API.md, "Funded offers", Statements) on the real API, worker, PostgreSQL
// and Temporal: a run over a period bills each (issuer, merchant) once, its total equal to the
// receivable's movement, its csv one line per transfer; a merchant's payments post to the ledger
// until the statement is paid; an issued statement never changes, what arrives later goes on the
// next (billing's own reading shows it, as a month is billed only once it has begun); a chunk lost
// after its commit issues nothing twice; operator routes refuse issuer tokens.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startStack, type Stack } from '../helpers/stack';
import { assertError, newIssuer, OPERATOR_TOKEN as OPERATOR, type TestIssuer, type TestResponse } from '../helpers/app';
import { groupBody } from '../helpers/groups';
import { cardOf, settledEvent } from '../helpers/events';
import { createMerchant, createOffer, daysFromNow } from '../helpers/catalogue';
import { assertLedgerHealthy } from '../helpers/ledger';
import { waitFor } from '../helpers/webhooks';
import { fromDbMinor } from '../../core/ledger';
import { periodOf } from '../../core/rules/statements';
import { previewChunk } from '../../core/domain/statements';
import { sqlTransaction } from '../../prisma/sql-transaction';
import { runAdminCommand } from '../helpers/admin-cli';
import { statementCommands } from '../../scripts/admin/statement-commands';
import { approvalCommands } from '../../scripts/admin/approval-commands';
import { nameOperator, type NamedOperator } from '../helpers/operators';

const FINAL = ['matched', 'not_matched', 'reversed', 'unknown'];
/** Longer than any test here takes, from its first purchase to its last run. */
const TEST_SPAN_MS = 90_000;

/**
 * The month a test bills, and the month after it. The worker posts a purchase at real time and a
 * month is billed only once it has begun, so a test runs within one month: one about to start
 * closer than TEST_SPAN_MS to a month's end waits for the next month first.
 */
async function months(): Promise<{ period: string; nextPeriod: string }> {
  const untilNextMonth = (at: Date) => Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1) - at.getTime();
  const left = untilNextMonth(new Date());
  if (left < TEST_SPAN_MS) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
  const now = new Date();
  return { period: periodOf(now), nextPeriod: periodOf(new Date(now.getTime() + untilNextMonth(now))) };
}

describe('merchant statements', function () {
  this.timeout(240_000);
  let stack: Stack;
  /** Chunk calls to fail once after their commit (by their count), as a worker killed then would. */
  const crashAfterChunks = new Set<number>();
  let chunkCalls = 0;

  before(async () => {
    stack = await startStack({
      // One receivable per chunk: a run over several merchants takes several chunks.
      settings: { statementChunkAccounts: 1 },
      faults: {
        afterCommit: (activity) => {
          if (activity !== 'billStatementChunk') return;
          chunkCalls += 1;
          if (crashAfterChunks.delete(chunkCalls)) throw new Error(`worker lost after chunk call ${chunkCalls}`);
        },
      },
    });
  });
  after(() => stack?.stop());

  let period: string;
  let nextPeriod: string;
  beforeEach(async () => ({ period, nextPeriod } = await months()));

  /** A funded offer's merchant and an issuer's group that shops there. */
  async function fundedMerchant(issuer?: TestIssuer) {
    const merchant = await createMerchant(stack.app, {
      brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 0, expiryDays: 365 },
    });
    await createOffer(stack.app, merchant.id, {
      cashbackRateBps: 500,
      brandedRateBps: 300,
      startsAt: daysFromNow(-5),
      funding: { issuerShareBps: 2000 },
      commission: { rateBps: 100, flatMinor: 10 },
    });
    const owner = issuer ?? (await newIssuer(stack.app, 'sandbox'));
    const group = (await owner.call('POST', '/api/v2/chg', groupBody())).body;
    assert.equal(
      (await owner.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {})).status,
      201,
    );
    return { merchantId: merchant.id as string, issuer: owner, chgId: group.id as string, card: cardOf(group) };
  }

  async function send(shop: Awaited<ReturnType<typeof fundedMerchant>>, amount: number, extra: object = {}) {
    const event = settledEvent(shop.card, { amount, merchantId: shop.merchantId, ...extra });
    assert.equal((await shop.issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
    const row = await stack.db.ingestedEvent.findFirstOrThrow({
      where: { issuerId: shop.issuer.id, kind: 'settled', externalId: event.id },
    });
    assert.ok(FINAL.includes(await stack.waitForStatus(row.id, FINAL)));
    return event.id;
  }

  const run = (body: unknown, key: string | null = randomUUID()) =>
    stack.app.request('POST', '/admin/v1/statements', {
      token: OPERATOR,
      body,
      headers: key === null ? {} : { 'Idempotency-Key': key },
    });

  async function finished(runId: string) {
    return waitFor(`statement run ${runId} to finish`, async () => {
      const res = await stack.app.operator('GET', `/admin/v1/statement-runs/${runId}`);
      assert.equal(res.status, 200, res.text);
      return res.body.status === 'processing' ? undefined : res.body;
    });
  }

  async function billed(forPeriod: string) {
    const res = await run({ period: forPeriod });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual([res.body.period, res.body.status], [forPeriod, 'processing']);
    return finished(res.body.id);
  }

  async function statementOf(merchantId: string, forPeriod: string) {
    const res = await stack.app.operator('GET', `/admin/v1/statements?period=${forPeriod}&merchantId=${merchantId}`);
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length <= 1);
    return res.body.data[0];
  }

  const receivableOf = async (issuerId: string, merchantId: string) =>
    fromDbMinor(
      (
        await stack.db.ledgerAccount.findUniqueOrThrow({
          where: { id: `${issuerId}:merchant_receivable:${merchantId}` },
        })
      ).balanceMinor,
    );

  async function csvOf(statementId: string) {
    const res = await fetch(`${stack.app.url}/admin/v1/statements/${statementId}?format=csv`, {
      headers: { authorization: `Bearer ${OPERATOR}` },
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const [header, ...lines] = (await res.text()).split('\r\n').filter((l) => l !== '');
    return { header, rows: lines.map((l) => l.split(',')) };
  }

  /**
   * A payment by root, held for a second operator (four eyes) and approved by a named one with
   * finance: what the payment call answered, as carrying it out answered it.
   */
  const pay = async (statementId: string, body: unknown, key = randomUUID()): Promise<TestResponse> => {
    const held = await stack.app.request('POST', `/admin/v1/statements/${statementId}/payments`, {
      token: OPERATOR,
      body,
      headers: { 'Idempotency-Key': key },
    });
    if (held.status !== 202) return held;
    finance ??= await nameOperator(stack.app, ['finance']);
    const approved = await finance.call('POST', `/admin/v1/approvals/${held.body.approvalId}/approve`);
    // The same held call sent again (its 202 replayed under its key): what carrying it out answered.
    const approval =
      approved.status === 409 ? await finance.call('GET', `/admin/v1/approvals/${held.body.approvalId}`) : approved;
    assert.equal(approval.status, 200, approval.text);
    const { statusCode, body: answered } = approval.body.result;
    return { status: statusCode, body: answered, text: JSON.stringify(answered), headers: approval.headers };
  };
  let finance: NamedOperator | undefined;

  it("bills the receivable's movement to the cent, lists each transfer in the csv, and is paid by payments", async () => {
    const shop = await fundedMerchant();
    const first = await send(shop, 10_000);
    await send(shop, 4_000);
    await send(shop, 2_500, { state: 'refunded', relatedTransactionId: first });
    const movement = await receivableOf(shop.issuer.id, shop.merchantId);

    const done = await billed(period);
    assert.equal(done.status, 'completed');
    const statement = await statementOf(shop.merchantId, period);
    assert.ok(statement, 'a statement for the merchant');
    assert.deepEqual([statement.issuerId, statement.status, statement.paidMinor], [shop.issuer.id, 'issued', 0]);
    // 10,000 at 5 % + 3 %: 500 cashback, 300 branded (available at once). 4,000 spends those 300 and earns on
    // 3,700: 185 and 111. The issuer funds a fifth of each (100, 60, 37, 22); commission 1 % of what was
    // rewarded on + 10 (110, 47). A quarter of the first refunded: 125 cashback and 75 branded back (from
    // cashback: its grant was spent), 40 of it the issuer's; 27 of its commission back.
    assert.deepEqual(statement.lines, {
      cashbackFundedMinor: 685 - 137,
      brandedFundedMinor: 411 - 82,
      brandedSpentMinor: 300,
      clawedBackMinor: 200 - 40,
      breakageMinor: 0,
      commissionMinor: 110 + 47 - 27,
    });
    assert.equal(statement.totalDueMinor, movement, "the total is the receivable's movement");
    assert.equal(statement.totalDueMinor, 548 + 329 - 300 - 160 + 130);

    const csv = await csvOf(statement.id);
    assert.equal(csv.header, 'transferId,kind,line,postedAt,amountMinor,transactionId,rewardEventId');
    assert.equal(csv.rows.length, statement.transferCount);
    assert.equal(
      csv.rows.reduce((sum, r) => sum + Number(r[4]), 0),
      statement.totalDueMinor,
    );
    const onReceivable = await stack.db.ledgerEntry.findMany({
      where: { accountId: `${shop.issuer.id}:merchant_receivable:${shop.merchantId}` },
    });
    assert.deepEqual(csv.rows.map((r) => r[0]).sort(), onReceivable.map((e) => e.transferId).sort());

    // Payments: part, then a replay of it, then more than is due, then the rest.
    const key = randomUUID();
    const part = await pay(statement.id, { amountMinor: 500, reference: 'ACH 1' }, key);
    assert.equal(part.status, 201, part.text);
    assert.deepEqual([part.body.statement.status, part.body.statement.paidMinor], ['issued', 500]);
    const replay = await pay(statement.id, { amountMinor: 500, reference: 'ACH 1' }, key);
    assert.equal(replay.body.id, part.body.id);
    assertError(await pay(statement.id, { amountMinor: 500, reference: 'ACH 2' }, key), 409, 'idempotency_key_reused');
    const over = await pay(statement.id, { amountMinor: statement.totalDueMinor, reference: 'ACH 3' });
    assertError(over, 409, 'payment_exceeds_due');
    assert.equal(over.body.details.outstandingMinor, statement.totalDueMinor - 500);
    const rest = await pay(statement.id, { amountMinor: statement.totalDueMinor - 500, reference: 'ACH 4' });
    assert.deepEqual([rest.body.statement.status, rest.body.statement.paidMinor], ['paid', statement.totalDueMinor]);
    assert.equal(await receivableOf(shop.issuer.id, shop.merchantId), 0, 'the merchant owes nothing more');
    const transfer = await stack.db.ledgerTransfer.findUniqueOrThrow({ where: { id: rest.body.transferId } });
    assert.deepEqual(
      [transfer.kind, transfer.debitAccountId, transfer.creditAccountId],
      [
        'merchant_payment',
        `${shop.issuer.id}:merchant_cash`,
        `${shop.issuer.id}:merchant_receivable:${shop.merchantId}`,
      ],
    );
    // One row per call: each payment held (pending), the replay of the first answered again, the
    // reused key refused; and each payment posted on a second operator's word (the change's own
    // row, naming the approval), the one that exceeded what was due posting nothing.
    const audited = await stack.db.operatorAuditLog.findMany({
      where: { targetId: { in: [statement.id, done.id] } },
      orderBy: { seq: 'asc' },
    });
    assert.deepEqual(
      audited.map((a) => `${a.action} ${a.outcome ?? '-'}${a.statusCode ? ` ${a.statusCode}` : ''}`),
      [
        'statement_run.create done',
        'statement.payment pending 202',
        'statement.payment -',
        'statement.payment pending 202',
        'statement.payment failed 409',
        'statement.payment pending 202',
        'statement.payment pending 202',
        'statement.payment -',
      ],
    );
    assert.equal((audited[3].details as { replayed?: boolean }).replayed, true);
    assert.equal(audited[2].actor, finance!.id);
    assert.equal((audited[2].details as { makerId?: string }).makerId, 'root');
    await assertLedgerHealthy(stack.db, shop.issuer.id);
  });

  it('never changes an issued statement: a later refund goes on the next one, and every transfer is on one', async () => {
    const shop = await fundedMerchant();
    const purchase = await send(shop, 10_000);
    await billed(period);
    const issued = await statementOf(shop.merchantId, period);
    const issuedCsv = await csvOf(issued.id);

    await send(shop, 10_000, { state: 'refunded', relatedTransactionId: purchase });
    // Billing the period again issues nothing more for it: the refund waits for the next statement.
    await billed(period);
    assert.deepEqual(await statementOf(shop.merchantId, period), issued);
    assert.deepEqual(await csvOf(issued.id), issuedCsv);
    // Next month cannot be billed before it begins; what its statement will hold is the refund.
    assertError(await run({ period: nextPeriod }), 400, 'period_not_started');
    const next = await sqlTransaction(stack.db, (tx) =>
      previewChunk(tx, {
        runId: 'preview',
        period: nextPeriod,
        afterAccountId: '',
        at: new Date(),
        issuerId: shop.issuer.id,
      }),
    );
    assert.equal(next.statements.length, 1);
    const [pending] = next.statements;
    assert.deepEqual(
      [pending.lines.cashbackFundedMinor, pending.lines.clawedBackMinor, pending.lines.commissionMinor],
      [0, 800 - 160, -110],
    );
    assert.equal(issued.totalDueMinor + pending.totalDueMinor, await receivableOf(shop.issuer.id, shop.merchantId));
    const entries = await stack.db.ledgerEntry.count({
      where: { accountId: `${shop.issuer.id}:merchant_receivable:${shop.merchantId}` },
    });
    assert.equal(issued.transferCount + pending.transferCount, entries, 'every transfer on one statement');
    await assertLedgerHealthy(stack.db, shop.issuer.id);
  });

  it('issues each statement once when chunks are lost after their commit, and runs one at a time', async () => {
    const shops = [await fundedMerchant(), await fundedMerchant(), await fundedMerchant()];
    for (const shop of shops) await send(shop, 5_000);
    crashAfterChunks.add(chunkCalls + 1).add(chunkCalls + 3);
    const done = await billed(period);
    assert.equal(done.status, 'completed');
    for (const shop of shops) {
      const res = await stack.app.operator('GET', `/admin/v1/statements?merchantId=${shop.merchantId}`);
      assert.equal(res.body.data.length, 1, 'one statement per merchant, whatever crashed');
      assert.equal(res.body.data[0].totalDueMinor, await receivableOf(shop.issuer.id, shop.merchantId));
    }
    assert.equal(crashAfterChunks.size, 0, 'both chunks were lost once');

    // One run at a time: a processing run refuses another.
    const row = await stack.db.statementRun.create({
      data: {
        id: `stmrun_${randomUUID()}`,
        period,
        status: 'processing',
        idempotencyKey: randomUUID(),
        requestHash: 'x',
        actor: 'test',
      },
    });
    try {
      assertError(await run({ period }), 409, 'statement_run_in_progress');
    } finally {
      await stack.db.statementRun.update({
        where: { id: row.id },
        data: { status: 'failed', completedAt: new Date() },
      });
    }
  });

  it('runs, reads and pays statements from the admin CLI as the routes do', async () => {
    const command = (name: string) => [...statementCommands, ...approvalCommands].find((c) => c.name === name)!;
    const shop = await fundedMerchant();
    await send(shop, 8_000);
    const [started] = (await runAdminCommand(stack, command('statement:run'), [period])) as any[];
    assert.equal(started.status, 'processing');
    await finished(started.id);
    const [status] = (await runAdminCommand(stack, command('statement:run-status'), [started.id])) as any[];
    assert.equal(status.status, 'completed');
    const [listed] = (await runAdminCommand(stack, command('statement:list'), [
      '--period',
      period,
      '--merchant',
      shop.merchantId,
    ])) as any[][];
    assert.equal(listed.length, 1);
    const statement = listed[0];
    assert.equal(statement.totalDueMinor, await receivableOf(shop.issuer.id, shop.merchantId));
    const payArgs = [statement.id, '--amount', String(statement.totalDueMinor), '--reference', 'WIRE 77'];
    // Held for a second person: another shell user approves it, and it is posted then.
    const [held] = (await runAdminCommand(stack, command('statement:pay'), payArgs)) as any[];
    assert.deepEqual([held.status, held.reason], ['pending', 'statement_payment']);
    assert.equal(await receivableOf(shop.issuer.id, shop.merchantId), statement.totalDueMinor, 'nothing posted yet');
    await assert.rejects(
      runAdminCommand(stack, command('approval:approve'), [held.approvalId]),
      (err: any) => err.reasonCode === 'same_operator',
    );
    const [approved] = (await runAdminCommand(
      stack,
      command('approval:approve'),
      [held.approvalId],
      'cli:second',
    )) as any[];
    const paid = approved.result.body;
    assert.equal(paid.statement.status, 'paid');
    // The same command again (its answer lost), approved again: its key posts nothing more.
    const [again] = (await runAdminCommand(stack, command('statement:pay'), payArgs)) as any[];
    const [twice] = (await runAdminCommand(
      stack,
      command('approval:approve'),
      [again.approvalId],
      'cli:second',
    )) as any[];
    assert.equal(twice.result.body.id, paid.id);
    assert.equal(await receivableOf(shop.issuer.id, shop.merchantId), 0);
    await assert.rejects(runAdminCommand(stack, command('statement:run'), ['2026-13']), /not a period/);
  });

  it('refuses issuer tokens, bad periods and missing keys; answers 404 for unknown ids', async () => {
    const issuer = await newIssuer(stack.app);
    for (const [method, path] of [
      ['POST', '/admin/v1/statements'],
      ['GET', '/admin/v1/statements'],
      ['GET', `/admin/v1/statements/stm_${randomUUID()}`],
      ['POST', `/admin/v1/statements/stm_${randomUUID()}/payments`],
    ] as const)
      assertError(
        await stack.app.request(method, path, {
          token: issuer.token,
          body: method === 'POST' ? { period } : undefined,
          headers: { 'Idempotency-Key': randomUUID() },
        }),
        401,
      );
    assertError(await run({ period: '2026-13' }), 400, 'invalid_body');
    assertError(await run({ period }, null), 400, 'idempotency_key_required');
    assertError(
      await stack.app.operator('GET', `/admin/v1/statements/stm_${randomUUID()}`),
      404,
      'statement_not_found',
    );
    assertError(
      await stack.app.operator('GET', `/admin/v1/statement-runs/stmrun_${randomUUID()}`),
      404,
      'statement_run_not_found',
    );
    assertError(await pay(`stm_${randomUUID()}`, { amountMinor: 1, reference: 'x' }), 404, 'statement_not_found');
  });
});
