import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../../prisma/client';
import { testDatabaseUrl } from '../../../helpers/env';
import { assertLedgerHealthy, at, chgId, key, ledgerIssuer, merchantId } from '../../../helpers/ledger';
import {
  ledgerInvariants,
  postTransfer,
  postTransferInNewTransaction,
  trialBalance,
  type PostTransferInput,
} from '../../../../core/domain/ledger';
import {
  TRANSFER_KINDS,
  planTransfer,
  isLedgerError,
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INSUFFICIENT_BALANCE,
  type TransferKind,
} from '../../../../core/ledger';

describe('core/domain/ledger postTransfer', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 25)));
  after(() => db.$disconnect());

  async function setup() {
    const issuerId = await ledgerIssuer(db);
    const base = { issuerId, chgId: chgId(), merchantId: merchantId(), at: at() };
    const post = (kind: TransferKind, amountMinor: number, extra: Partial<PostTransferInput> = {}) =>
      postTransferInNewTransaction(db, { ...base, kind, amountMinor, idempotencyKey: key(kind), ...extra });
    return { issuerId, base, post };
  }

  it('posts each transfer kind as two entries on the planned accounts, summing to zero', async () => {
    const { issuerId, base } = await setup();
    // Raw branded postings bypass the grants (branded.ts keeps both in step), which leaves
    // the ledger deliberately unhealthy; so this runs in a transaction that is rolled back,
    // keeping the shared database healthy for tests that check every issuer.
    const ROLLBACK = new Error('rollback');
    await assert.rejects(
      db.$transaction(
        async (tx) => {
          const post = (kind: TransferKind, amountMinor: number) =>
            postTransfer(tx, { ...base, kind, amountMinor, idempotencyKey: key(kind), transactionId: 'txn_x' });
          // Fund the liabilities first so every kind can be posted (and what the group owes, which
          // a repayment and a write-off take from).
          await post('earn_cashback', 1000);
          await post('earn_branded', 1000);
          await post('clawback_cashback_owed', 200);
          for (const kind of TRANSFER_KINDS) {
            const { transfer, created } = await post(kind, 100);
            assert.ok(created);
            const plan = planTransfer(kind, base);
            assert.equal(transfer.debitAccountId, plan.debit.id);
            assert.equal(transfer.creditAccountId, plan.credit.id);
            const entries = await tx.ledgerEntry.findMany({
              where: { transferId: transfer.id },
              orderBy: { id: 'asc' },
            });
            assert.deepEqual(
              entries.map((e) => [e.accountId, e.amountMinor]),
              [
                [plan.debit.id, 100n],
                [plan.credit.id, -100n],
              ],
              kind,
            );
          }
          const tb = await trialBalance(tx, { issuerId });
          assert.equal(tb.totalMinor, 0);
          const byKind = Object.fromEntries(tb.accounts.map((a) => [a.kind, a.balanceMinor]));
          // cashback: +1000 +100 -100 (clawback), adjusted +100 -100, paid out -100, repaid -100; branded:
          // +1000 +100 -100 (spend) -100 (expire) -100 (clawback), adjusted +100 -100; owed: +200 +100,
          // +100 (a claim's credit owed back), repaid -100, written off -100; the issuer funds and takes
          // back alike, funds a write-off and is owed back a claim's credit;
          // receivable: +2000 -200, then +100 +100 -100 -100 -100 -100 (earns, spend, clawbacks), -100 -100
          // +100 (the issuer's shares and their return), +100 -100 (commission and its return), -100 (a payment).
          assert.deepEqual(byKind, {
            chg_cashback: 800,
            chg_branded: 800,
            chg_cashback_owed: 200,
            breakage: 100,
            merchant_receivable: 1400,
            issuer_adjustments: 0,
            issuer_payable: 100,
            issuer_funding: 100,
            commission: 0,
            merchant_cash: 100,
          });
          // The invariant check notices exactly the missing grants and draws, nothing else.
          const violations = await ledgerInvariants(tx, { issuerId });
          assert.deepEqual(
            [...new Set(violations.map((v) => v.invariant))],
            [
              'branded account balance equals the remaining value of its grants',
              'transfer draws sum to the transfer amount',
            ],
          );
          throw ROLLBACK;
        },
        { timeout: 30_000 },
      ),
      (e) => e === ROLLBACK,
    );
    assert.equal(await db.ledgerTransfer.count({ where: { issuerId } }), 0);
  });

  it('posts nothing when the same key comes again with the same content', async () => {
    const { issuerId, post } = await setup();
    const k = key();
    const first = await post('earn_cashback', 500, { idempotencyKey: k });
    const again = await post('earn_cashback', 500, { idempotencyKey: k, rewardEventId: null });
    assert.equal(again.created, false);
    assert.equal(again.transfer.id, first.transfer.id);
    assert.equal(await db.ledgerEntry.count({ where: { issuerId } }), 2);
    assert.equal(
      (await trialBalance(db, { issuerId })).accounts.find((a) => a.kind === 'chg_cashback')!.balanceMinor,
      500,
    );
    await assertLedgerHealthy(db, issuerId);
  });

  it('refuses the same key with a different amount or kind as a typed conflict', async () => {
    const { issuerId, post } = await setup();
    const k = key();
    await post('earn_cashback', 500, { idempotencyKey: k });
    await assert.rejects(post('earn_cashback', 501, { idempotencyKey: k }), (e) =>
      isLedgerError(e, LEDGER_IDEMPOTENCY_CONFLICT),
    );
    await assert.rejects(post('earn_branded', 500, { idempotencyKey: k }), (e) =>
      isLedgerError(e, LEDGER_IDEMPOTENCY_CONFLICT),
    );
    assert.equal(await db.ledgerTransfer.count({ where: { issuerId } }), 1);
    await assertLedgerHealthy(db, issuerId);
  });

  it('records exactly one transfer when 20 posts of one key race', async () => {
    const { issuerId, post } = await setup();
    const k = key();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => post('earn_cashback', 700, { idempotencyKey: k })),
    );
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.transfer.id)).size, 1);
    assert.equal(await db.ledgerTransfer.count({ where: { issuerId } }), 1);
    assert.equal(await db.ledgerEntry.count({ where: { issuerId } }), 2);
    await assertLedgerHealthy(db, issuerId);
  });

  it('never takes a liability below zero: a typed error, and nothing written', async () => {
    const { issuerId, post } = await setup();
    await post('earn_cashback', 300);
    const k = key('clawback');
    await assert.rejects(post('clawback_cashback', 301, { idempotencyKey: k }), (e) =>
      isLedgerError(e, LEDGER_INSUFFICIENT_BALANCE),
    );
    await assert.rejects(post('spend_branded', 1), (e) => isLedgerError(e, LEDGER_INSUFFICIENT_BALANCE));
    assert.equal(await db.ledgerTransfer.count({ where: { idempotencyKey: k } }), 0);
    assert.equal(await db.ledgerTransfer.count({ where: { issuerId } }), 1);
    await assertLedgerHealthy(db, issuerId);
  });

  it('lets a caller combine a posting with its own writes in one transaction that rolls back whole', async () => {
    const { issuerId, base } = await setup();
    await assert.rejects(
      db.$transaction(async (tx) => {
        await postTransfer(tx, { ...base, kind: 'earn_cashback', amountMinor: 10, idempotencyKey: key() });
        throw new Error('caller failed after posting');
      }),
      /caller failed/,
    );
    assert.equal(await db.ledgerTransfer.count({ where: { issuerId } }), 0);
  });

  it('rejects updates and deletes of entries and transfers', async () => {
    const { issuerId, post } = await setup();
    const { transfer } = await post('earn_cashback', 10);
    await assert.rejects(
      db.ledgerEntry.updateMany({ where: { transferId: transfer.id }, data: { amountMinor: 11n } }),
      /immutable/,
    );
    await assert.rejects(db.ledgerTransfer.deleteMany({ where: { id: transfer.id } }), /immutable/);
    await assertLedgerHealthy(db, issuerId);
  });
});
