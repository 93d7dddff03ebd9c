// Customer-service adjustments posted by core/domain/adjustments.ts against a real database:
// the transfer on the issuer's adjustment account, the grant of a branded credit, the draws of
// a branded debit (soonest-expiring first, spendable yet or not), the zero floor, the
// idempotency key, the signed reward event and its running total, and the audit entry.
import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../prisma/client';
import { testDatabaseUrl } from '../../helpers/env';
import { assertLedgerHealthy, at, key, ledgerIssuer, plusDays } from '../../helpers/ledger';
import { newId } from '../../../core/ids';
import { ApiError } from '../../../core/errors';
import { accounts, fromDbMinor } from '../../../core/ledger';
import { earnBranded, inTransaction, ledgerInvariants } from '../../../core/domain/ledger';
import { postAdjustment, type PostAdjustmentInput } from '../../../core/domain/adjustments';

describe('core/domain/adjustments postAdjustment', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 25)));
  after(() => db.$disconnect());

  const t0 = at();
  const EXPIRY_DAYS = 30;

  // Every issuer a test creates: its ledger must be healthy once the test is done.
  let issuers: string[] = [];
  beforeEach(() => (issuers = []));
  afterEach(async () => {
    for (const issuerId of issuers) {
      assert.deepEqual(await ledgerInvariants(db, { issuerId }), []);
      await assertLedgerHealthy(db, issuerId);
    }
  });

  async function newGroup(issuerId: string): Promise<string> {
    const id = newId('chg');
    await db.cardholderGroup.create({ data: { id, issuerId, externalId: `ext-${id}`, status: 'active' } });
    return id;
  }

  async function newMerchant(issuerIds: string[], brandedEnabled = true): Promise<string> {
    const id = newId('mp');
    await db.merchant.create({
      data: {
        id,
        issuerIds,
        name: `adjustment test ${id}`,
        category: 'dining',
        brandedEnabled,
        // A delay that a purchase's grant would wait out; an adjustment's is available at once.
        brandedAvailabilityDelayDays: 5,
        brandedExpiryDays: EXPIRY_DAYS,
      },
    });
    return id;
  }

  async function setup() {
    const issuerId = await ledgerIssuer(db);
    issuers.push(issuerId);
    const chgId = await newGroup(issuerId);
    const merchantId = await newMerchant([issuerId]);
    const adjust = (request: Partial<PostAdjustmentInput> & Pick<PostAdjustmentInput, 'amountMinor'>) =>
      inTransaction(db, (tx) =>
        postAdjustment(tx, {
          issuerId,
          chgId,
          balanceType: 'cashback',
          reasonCode: 'goodwill',
          actor: 'tok_test',
          idempotencyKey: key('adj'),
          at: t0,
          recordedAt: t0,
          ...request,
        }),
      );
    const branded = (amountMinor: number, extra: Partial<PostAdjustmentInput> = {}) =>
      adjust({ balanceType: 'branded', merchantId, amountMinor, ...extra });
    const balance = async (id: string) =>
      fromDbMinor((await db.ledgerAccount.findUnique({ where: { id } }))?.balanceMinor ?? 0n);
    const cashbackAccount = accounts.chgCashback(issuerId, chgId).id;
    const brandedAccount = accounts.chgBranded(issuerId, chgId, merchantId).id;
    const issuerAccount = accounts.issuerAdjustments(issuerId).id;
    /** Everything a posting writes, counted: a refused one must leave all of it as it was. */
    const footprint = async () => ({
      transfers: await db.ledgerTransfer.count({ where: { issuerId } }),
      draws: await db.rewardGrantDraw.count({ where: { issuerId } }),
      grants: await db.rewardGrant.findMany({
        where: { issuerId },
        select: { id: true, remainingMinor: true },
        orderBy: { id: 'asc' },
      }),
      events: await db.rewardEvent.count({ where: { issuerId } }),
      totals: await db.rewardTotal.findMany({ where: { issuerId }, orderBy: { type: 'asc' } }),
      adjustments: await db.adjustment.count({ where: { issuerId } }),
      audits: await db.operatorAuditLog.count({
        where: { action: 'adjustment.post', details: { path: ['issuerId'], equals: issuerId } },
      }),
      balances: await db.ledgerAccount.findMany({
        where: { issuerId },
        select: { id: true, balanceMinor: true },
        orderBy: { id: 'asc' },
      }),
    });
    return {
      issuerId,
      chgId,
      merchantId,
      adjust,
      branded,
      balance,
      cashbackAccount,
      brandedAccount,
      issuerAccount,
      footprint,
    };
  }

  async function rejectsWith(
    promise: Promise<unknown>,
    expected: { status: number; reasonCode: string; details?: Record<string, unknown> },
  ): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
      assert.equal(err.status, expected.status);
      assert.equal(err.reasonCode, expected.reasonCode);
      if (expected.details) assert.deepEqual(err.details, expected.details);
      return true;
    });
  }

  it('credits cashback from the issuer adjustment account and debits it back', async () => {
    const s = await setup();
    const credit = await s.adjust({ amountMinor: 500, note: 'late delivery' });
    assert.equal(credit.created, true);
    assert.match(credit.adjustment.id, /^adj_/);
    assert.equal(credit.adjustment.amountMinor, 500);
    assert.equal(credit.adjustment.balanceType, 'cashback');
    assert.equal(credit.adjustment.merchantId, null);
    assert.equal(credit.adjustment.rewardGrantId, null);
    assert.equal(credit.adjustment.note, 'late delivery');
    assert.deepEqual(credit.adjustment.createdAt, t0);
    const creditTransfer = await db.ledgerTransfer.findUniqueOrThrow({ where: { id: credit.adjustment.transferId } });
    assert.equal(creditTransfer.kind, 'adjust_credit_cashback');
    assert.equal(creditTransfer.debitAccountId, s.issuerAccount);
    assert.equal(creditTransfer.creditAccountId, s.cashbackAccount);
    assert.equal(creditTransfer.amountMinor, 500n);
    assert.equal(creditTransfer.rewardEventId, credit.adjustment.rewardEventId);
    assert.equal(await s.balance(s.cashbackAccount), 500);
    assert.equal(await s.balance(s.issuerAccount), 500, 'the issuer owes what its customer service credited');

    const debit = await s.adjust({ amountMinor: -200, reasonCode: 'correction', at: plusDays(t0, 1) });
    assert.equal(debit.created, true);
    assert.equal(debit.adjustment.amountMinor, -200);
    const debitTransfer = await db.ledgerTransfer.findUniqueOrThrow({ where: { id: debit.adjustment.transferId } });
    assert.equal(debitTransfer.kind, 'adjust_debit_cashback');
    assert.equal(debitTransfer.debitAccountId, s.cashbackAccount);
    assert.equal(debitTransfer.creditAccountId, s.issuerAccount);
    assert.equal(debitTransfer.amountMinor, 200n, 'a transfer amount is a magnitude');
    assert.equal(await s.balance(s.cashbackAccount), 300);
    assert.equal(await s.balance(s.issuerAccount), 300);

    // The debit draws the cashback down to exactly zero, and no further.
    const rest = await s.adjust({ amountMinor: -300 });
    assert.equal(rest.created, true);
    assert.equal(await s.balance(s.cashbackAccount), 0);
    const written = await s.footprint();
    assert.equal(written.adjustments, 3);
    assert.equal(written.audits, 3);
    assert.equal(written.events, 3);
    assert.equal(written.transfers, 3);
  });

  it('records a signed reward event per adjustment, and a reward_total holding the net', async () => {
    const s = await setup();
    const credit = await s.adjust({ amountMinor: 700 });
    const debit = await s.adjust({ amountMinor: -250, reasonCode: 'fraud' });
    const events = await db.rewardEvent.findMany({
      where: { id: { in: [credit.adjustment.rewardEventId, debit.adjustment.rewardEventId] } },
    });
    const byId = new Map(events.map((e) => [e.id, e]));
    const creditEvent = byId.get(credit.adjustment.rewardEventId)!;
    const debitEvent = byId.get(debit.adjustment.rewardEventId)!;
    assert.equal(creditEvent.type, 'cashback_adjusted');
    assert.equal(creditEvent.amountMinor, 700n);
    assert.equal(creditEvent.merchantId, null);
    assert.equal(creditEvent.chgId, s.chgId);
    assert.equal(creditEvent.description, 'Goodwill credit: $7.00 cashback');
    assert.equal(debitEvent.type, 'cashback_adjusted');
    assert.equal(debitEvent.amountMinor, -250n, 'a debit is a negative amount');
    assert.equal(debitEvent.description, 'Fraud debit: $2.50 cashback');
    const totals = await db.rewardTotal.findMany({ where: { issuerId: s.issuerId, chgId: s.chgId } });
    assert.deepEqual(
      totals.map((t) => ({ type: t.type, merchantId: t.merchantId, amount: t.amountMinor, count: t.eventCount })),
      [{ type: 'cashback_adjusted', merchantId: '', amount: 450n, count: 2n }],
    );

    // Branded: a credit and a debit, one net total at the merchant.
    const bCredit = await s.branded(400);
    const bDebit = await s.branded(-150);
    const bEvents = await db.rewardEvent.findMany({
      where: { id: { in: [bCredit.adjustment.rewardEventId, bDebit.adjustment.rewardEventId] } },
    });
    const bById = new Map(bEvents.map((e) => [e.id, e]));
    assert.equal(bById.get(bCredit.adjustment.rewardEventId)!.amountMinor, 400n);
    assert.equal(bById.get(bCredit.adjustment.rewardEventId)!.rewardGrantId, bCredit.adjustment.rewardGrantId);
    assert.equal(bById.get(bDebit.adjustment.rewardEventId)!.amountMinor, -150n);
    assert.equal(bById.get(bDebit.adjustment.rewardEventId)!.type, 'branded_adjusted');
    assert.equal(bById.get(bDebit.adjustment.rewardEventId)!.merchantId, s.merchantId);
    const branded = await db.rewardTotal.findMany({
      where: { issuerId: s.issuerId, chgId: s.chgId, type: 'branded_adjusted' },
    });
    assert.deepEqual(
      branded.map((t) => ({ merchantId: t.merchantId, amount: t.amountMinor, count: t.eventCount })),
      [{ merchantId: s.merchantId, amount: 250n, count: 2n }],
    );
  });

  it('writes an adjustment.post audit entry with the adjustment', async () => {
    const s = await setup();
    const { adjustment } = await s.adjust({ amountMinor: 125, reasonCode: 'missing_reward', actor: 'tok_agent_7' });
    const audits = await db.operatorAuditLog.findMany({ where: { targetId: adjustment.id } });
    assert.equal(audits.length, 1);
    const [audit] = audits;
    assert.equal(audit.action, 'adjustment.post');
    assert.equal(audit.actor, 'tok_agent_7');
    assert.deepEqual(audit.createdAt, t0);
    assert.deepEqual(audit.details, {
      issuerId: s.issuerId,
      chgId: s.chgId,
      balanceType: 'cashback',
      amountMinor: 125,
      merchantId: null,
      reasonCode: 'missing_reward',
      transactionId: null,
    });
  });

  it('opens a grant for a branded credit, available at once and expiring by the merchant rule', async () => {
    const s = await setup();
    const { adjustment, created } = await s.branded(600);
    assert.equal(created, true);
    assert.equal(adjustment.balanceType, 'branded');
    assert.equal(adjustment.merchantId, s.merchantId);
    assert.ok(adjustment.rewardGrantId);
    const grant = await db.rewardGrant.findUniqueOrThrow({ where: { id: adjustment.rewardGrantId } });
    assert.equal(grant.earnTransferId, adjustment.transferId);
    assert.equal(grant.accountId, s.brandedAccount);
    assert.equal(grant.chgId, s.chgId);
    assert.equal(grant.merchantId, s.merchantId);
    assert.equal(grant.amountMinor, 600n);
    assert.equal(grant.remainingMinor, 600n);
    assert.deepEqual(grant.availableAt, t0, 'not delayed by the merchant availability delay');
    assert.deepEqual(grant.expiresAt, plusDays(t0, EXPIRY_DAYS));
    const transfer = await db.ledgerTransfer.findUniqueOrThrow({ where: { id: adjustment.transferId } });
    assert.equal(transfer.kind, 'adjust_credit_branded');
    assert.equal(transfer.debitAccountId, s.issuerAccount, 'funded by the issuer, never the merchant');
    assert.equal(transfer.creditAccountId, s.brandedAccount);
    assert.equal(await s.balance(s.brandedAccount), 600);
    assert.equal(
      await db.ledgerAccount.count({ where: { issuerId: s.issuerId, kind: 'merchant_receivable' } }),
      0,
      'the merchant receivable is not touched',
    );
  });

  it('draws a branded debit soonest-expiring first, from unexpired grants spendable yet or not', async () => {
    const s = await setup();
    // Grant A: the adjustment credit, available now, expires on day 30.
    const a = await s.branded(100);
    // Grant B: a purchase's grant, not yet available (day 5) but expiring first (day 20).
    const earn = (amountMinor: number, availableInDays: number, expiresInDays: number) =>
      inTransaction(db, (tx) =>
        earnBranded(tx, {
          issuerId: s.issuerId,
          chgId: s.chgId,
          merchantId: s.merchantId,
          amountMinor,
          idempotencyKey: key('earn'),
          at: t0,
          availableAt: plusDays(t0, availableInDays),
          expiresAt: plusDays(t0, expiresInDays),
        }),
      );
    const b = await earn(100, 5, 20);
    // Grant C: already expired (not yet swept): no debit may take it.
    const c = await earn(50, -10, -1);
    assert.equal(await s.balance(s.brandedAccount), 250);

    const debit = await s.branded(-150, { reasonCode: 'correction' });
    assert.equal(debit.created, true);
    assert.equal(debit.adjustment.rewardGrantId, null);
    const transfer = await db.ledgerTransfer.findUniqueOrThrow({ where: { id: debit.adjustment.transferId } });
    assert.equal(transfer.kind, 'adjust_debit_branded');
    assert.equal(transfer.debitAccountId, s.brandedAccount);
    assert.equal(transfer.creditAccountId, s.issuerAccount);
    assert.equal(transfer.amountMinor, 150n);
    const draws = await db.rewardGrantDraw.findMany({ where: { transferId: transfer.id } });
    const drawn = Object.fromEntries(draws.map((d) => [d.grantId, d.amountMinor]));
    assert.deepEqual(drawn, { [b.grant.id]: 100n, [a.adjustment.rewardGrantId!]: 50n });
    const remaining = async (id: string) => (await db.rewardGrant.findUniqueOrThrow({ where: { id } })).remainingMinor;
    assert.equal(await remaining(b.grant.id), 0n);
    assert.equal(await remaining(a.adjustment.rewardGrantId!), 50n);
    assert.equal(await remaining(c.grant.id), 50n, 'an expired grant is not drawn');
    assert.equal(await s.balance(s.brandedAccount), 100);

    // What is left to debit is the unexpired 50, not the expired grant's 50 too.
    const before = await s.footprint();
    await rejectsWith(s.branded(-51), {
      status: 409,
      reasonCode: 'insufficient_balance',
      details: { balanceType: 'branded', merchantId: s.merchantId, availableMinor: 50 },
    });
    assert.deepEqual(await s.footprint(), before, 'a refused branded debit draws nothing');
  });

  it('refuses a debit beyond the balance with insufficient_balance and posts nothing', async () => {
    const s = await setup();
    // Nothing held yet: not even an account.
    let before = await s.footprint();
    await rejectsWith(s.adjust({ amountMinor: -1 }), {
      status: 409,
      reasonCode: 'insufficient_balance',
      details: { balanceType: 'cashback', merchantId: null, availableMinor: 0 },
    });
    assert.deepEqual(await s.footprint(), before);

    await s.adjust({ amountMinor: 100 });
    await s.branded(80);
    before = await s.footprint();
    await rejectsWith(s.adjust({ amountMinor: -101 }), {
      status: 409,
      reasonCode: 'insufficient_balance',
      details: { balanceType: 'cashback', merchantId: null, availableMinor: 100 },
    });
    await rejectsWith(s.branded(-81), {
      status: 409,
      reasonCode: 'insufficient_balance',
      details: { balanceType: 'branded', merchantId: s.merchantId, availableMinor: 80 },
    });
    assert.deepEqual(await s.footprint(), before, 'nothing written: transfer, draws, event, total, row, audit');
    assert.equal(await s.balance(s.cashbackAccount), 100);
    assert.equal(await s.balance(s.brandedAccount), 80);

    // The refused key was not used up: the same key with a debit that fits posts.
    const reusable = key('adj');
    await rejectsWith(s.adjust({ amountMinor: -150, idempotencyKey: reusable }), {
      status: 409,
      reasonCode: 'insufficient_balance',
    });
    const later = await s.adjust({ amountMinor: -100, idempotencyKey: reusable });
    assert.equal(later.created, true);
    assert.equal(await s.balance(s.cashbackAccount), 0);
  });

  it('posts once for the same key and request, and returns the first adjustment again', async () => {
    const s = await setup();
    const idempotencyKey = key('adj');
    const first = await s.adjust({ amountMinor: 300, idempotencyKey, note: 'n' });
    const before = await s.footprint();
    // Another instant and actor do not make it another request.
    const again = await s.adjust({ amountMinor: 300, idempotencyKey, note: 'n', at: plusDays(t0, 2), actor: 'tok_2' });
    assert.equal(again.created, false);
    assert.deepEqual(again.adjustment, first.adjustment);
    assert.deepEqual(await s.footprint(), before);
    assert.equal(await s.balance(s.cashbackAccount), 300);

    // A branded debit replayed draws nothing more.
    await s.branded(200);
    const debitKey = key('adj');
    const debit = await s.branded(-120, { idempotencyKey: debitKey });
    const afterDebit = await s.footprint();
    const replay = await s.branded(-120, { idempotencyKey: debitKey });
    assert.equal(replay.created, false);
    assert.deepEqual(replay.adjustment, debit.adjustment);
    assert.deepEqual(await s.footprint(), afterDebit);
    assert.equal(await s.balance(s.brandedAccount), 80);
  });

  it('refuses the same key with another request: idempotency_key_reused', async () => {
    const s = await setup();
    const otherGroup = await newGroup(s.issuerId);
    const idempotencyKey = key('adj');
    const first = await s.adjust({ amountMinor: 300, idempotencyKey });
    const before = await s.footprint();
    const reused = { status: 409, reasonCode: 'idempotency_key_reused' };
    await rejectsWith(s.adjust({ amountMinor: 301, idempotencyKey }), {
      ...reused,
      details: { adjustmentId: first.adjustment.id, chgId: s.chgId },
    });
    await rejectsWith(s.adjust({ amountMinor: -300, idempotencyKey }), reused);
    await rejectsWith(s.adjust({ amountMinor: 300, idempotencyKey, reasonCode: 'correction' }), reused);
    await rejectsWith(s.adjust({ amountMinor: 300, idempotencyKey, note: 'changed' }), reused);
    await rejectsWith(s.adjust({ amountMinor: 300, idempotencyKey, chgId: otherGroup }), reused);
    await rejectsWith(s.branded(300, { idempotencyKey }), reused);
    assert.deepEqual(await s.footprint(), before);

    // Keys are per issuer: another issuer may use the same one.
    const other = await setup();
    const theirs = await other.adjust({ amountMinor: 300, idempotencyKey });
    assert.equal(theirs.created, true);
    assert.notEqual(theirs.adjustment.id, first.adjustment.id);
  });

  it('refuses a group, merchant or programme that is not the issuer', async () => {
    const s = await setup();
    const other = await setup();
    const before = await s.footprint();
    const otherBefore = await other.footprint();
    // Another issuer's group: 404, for a credit and a debit.
    await rejectsWith(s.adjust({ amountMinor: 100, chgId: other.chgId }), { status: 404, reasonCode: 'chg_not_found' });
    await rejectsWith(s.adjust({ amountMinor: -100, chgId: other.chgId }), {
      status: 404,
      reasonCode: 'chg_not_found',
    });
    await rejectsWith(s.adjust({ amountMinor: 100, chgId: newId('chg') }), {
      status: 404,
      reasonCode: 'chg_not_found',
    });
    // A merchant visible only to another issuer.
    await rejectsWith(s.branded(100, { merchantId: other.merchantId }), {
      status: 404,
      reasonCode: 'merchant_not_found',
    });
    // A merchant without branded balance takes no credit.
    const plain = await newMerchant([s.issuerId], false);
    await rejectsWith(s.branded(100, { merchantId: plain }), { status: 409, reasonCode: 'branded_not_enabled' });
    assert.deepEqual(await s.footprint(), before);
    assert.deepEqual(await other.footprint(), otherBefore);
  });
});
