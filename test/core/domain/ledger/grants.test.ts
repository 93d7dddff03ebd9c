import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../../prisma/client';
import { testDatabaseUrl } from '../../../helpers/env';
import { assertLedgerHealthy, at, chgId, key, ledgerIssuer, merchantId, plusDays } from '../../../helpers/ledger';
import {
  clawBackBranded,
  drawFromGrants,
  earnBranded,
  expireGrant,
  inTransaction,
  listExpiredGrants,
  spendBranded,
} from '../../../../core/domain/ledger';
import { isLedgerError, LEDGER_GRANT_NOT_EXPIRABLE } from '../../../../core/ledger';

describe('core/domain/ledger grants and draws', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 25)));
  after(() => db.$disconnect());

  const t0 = at();

  async function setup() {
    const issuerId = await ledgerIssuer(db);
    const p = { issuerId, chgId: chgId(), merchantId: merchantId() };
    const earn = (amountMinor: number, availableInDays: number, expiresInDays: number, createdAt = t0) =>
      inTransaction(db, (tx) =>
        earnBranded(tx, {
          ...p,
          amountMinor,
          idempotencyKey: key('earn'),
          at: createdAt,
          transactionId: 'txn_src',
          availableAt: plusDays(t0, availableInDays),
          expiresAt: plusDays(t0, expiresInDays),
        }),
      );
    return { issuerId, p, earn };
  }

  it('creates one grant per earn, idempotently', async () => {
    const { issuerId, p } = await setup();
    const input = {
      ...p,
      amountMinor: 300,
      idempotencyKey: key(),
      at: t0,
      availableAt: t0,
      expiresAt: plusDays(t0, 10),
    };
    const first = await inTransaction(db, (tx) => earnBranded(tx, input));
    const again = await inTransaction(db, (tx) => earnBranded(tx, input));
    assert.equal(again.created, false);
    assert.equal(again.grant.id, first.grant.id);
    assert.match(first.grant.id, /^rg_/);
    assert.equal(first.grant.remainingMinor, 300);
    assert.equal(await db.rewardGrant.count({ where: { issuerId } }), 1);
    await assertLedgerHealthy(db, issuerId);
  });

  it('spends FIFO by expiry, and only from available, unexpired grants', async () => {
    const { issuerId, p, earn } = await setup();
    const late = await earn(100, 0, 90);
    const soon = await earn(100, 0, 30);
    const notYet = await earn(100, 5, 20); // expires first, but not available on day 1
    const expired = await earn(100, 0, 1); // already expired on day 1
    const spend = await inTransaction(db, (tx) =>
      spendBranded(tx, { ...p, maxAmountMinor: 150, idempotencyKey: key(), at: plusDays(t0, 1) }),
    );
    assert.deepEqual(spend.allocations, [
      { grantId: soon.grant.id, amountMinor: 100 },
      { grantId: late.grant.id, amountMinor: 50 },
    ]);
    assert.equal(spend.transfer!.amountMinor, 150);
    const rest = await inTransaction(db, (tx) =>
      spendBranded(tx, { ...p, maxAmountMinor: 1000, idempotencyKey: key(), at: plusDays(t0, 1) }),
    );
    assert.equal(rest.drawnMinor, 50, 'the not-yet-available and expired grants are not spendable');
    const remaining = Object.fromEntries(
      (await db.rewardGrant.findMany({ where: { issuerId } })).map((g) => [g.id, g.remainingMinor]),
    );
    assert.equal(remaining[notYet.grant.id], 100n);
    assert.equal(remaining[expired.grant.id], 100n);
    const none = await inTransaction(db, (tx) =>
      spendBranded(tx, { ...p, maxAmountMinor: 10, idempotencyKey: key(), at: plusDays(t0, 1) }),
    );
    assert.deepEqual([none.transfer, none.drawnMinor], [null, 0]);
    await assertLedgerHealthy(db, issuerId);
  });

  it('replays a spend by key without drawing again', async () => {
    const { issuerId, p, earn } = await setup();
    await earn(500, 0, 30);
    const input = { ...p, maxAmountMinor: 200, idempotencyKey: key(), at: plusDays(t0, 1) };
    const first = await inTransaction(db, (tx) => spendBranded(tx, input));
    const again = await inTransaction(db, (tx) => spendBranded(tx, input));
    assert.equal(again.created, false);
    assert.equal(again.transfer!.id, first.transfer!.id);
    assert.deepEqual(again.allocations, first.allocations);
    assert.equal((await db.rewardGrant.findFirstOrThrow({ where: { issuerId } })).remainingMinor, 300n);
    await assertLedgerHealthy(db, issuerId);
  });

  it('claws back from the given grants first and from nothing else', async () => {
    const { issuerId, p, earn } = await setup();
    const other = await earn(400, 0, 10);
    const refunded = await earn(100, 0, 60);
    const claw = await inTransaction(db, (tx) =>
      clawBackBranded(tx, {
        ...p,
        maxAmountMinor: 250,
        grantIds: [refunded.grant.id],
        idempotencyKey: key(),
        at: plusDays(t0, 1),
      }),
    );
    assert.deepEqual(claw.allocations, [{ grantId: refunded.grant.id, amountMinor: 100 }]);
    assert.equal((await db.rewardGrant.findUniqueOrThrow({ where: { id: other.grant.id } })).remainingMinor, 400n);
    await assertLedgerHealthy(db, issuerId);
  });

  it('expires a grant once, moving its remaining value to breakage', async () => {
    const { issuerId, p, earn } = await setup();
    const g = await earn(300, 0, 10);
    await inTransaction(db, (tx) =>
      spendBranded(tx, { ...p, maxAmountMinor: 120, idempotencyKey: key(), at: plusDays(t0, 1) }),
    );
    await assert.rejects(
      inTransaction(db, (tx) => expireGrant(tx, { issuerId, grantId: g.grant.id, at: plusDays(t0, 9) })),
      (e) => isLedgerError(e, LEDGER_GRANT_NOT_EXPIRABLE),
    );
    const due = await inTransaction(db, (tx) => listExpiredGrants(tx, { at: plusDays(t0, 10), limit: 10, issuerId }));
    assert.deepEqual(
      due.map((d) => d.id),
      [g.grant.id],
    );
    const expired = await inTransaction(db, (tx) =>
      expireGrant(tx, { issuerId, grantId: g.grant.id, at: plusDays(t0, 10) }),
    );
    assert.equal(expired.drawnMinor, 180);
    assert.equal(expired.transfer!.kind, 'expire_branded');
    const again = await inTransaction(db, (tx) =>
      expireGrant(tx, { issuerId, grantId: g.grant.id, at: plusDays(t0, 11) }),
    );
    assert.equal(again.created, false);
    assert.equal(again.transfer!.id, expired.transfer!.id);
    assert.deepEqual(
      await inTransaction(db, (tx) => listExpiredGrants(tx, { at: plusDays(t0, 10), limit: 10, issuerId })),
      [],
    );
    await assertLedgerHealthy(db, issuerId);
  });

  it('never overdraws when draws race', async () => {
    const { issuerId, p, earn } = await setup();
    await earn(100, 0, 30);
    await earn(100, 0, 40);
    await earn(100, 0, 50);
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        inTransaction(db, (tx) =>
          spendBranded(tx, { ...p, maxAmountMinor: 70, idempotencyKey: key(), at: plusDays(t0, 1) }),
        ),
      ),
    );
    const drawn = results.reduce((s, r) => s + r.drawnMinor, 0);
    assert.equal(drawn, 300);
    const grants = await db.rewardGrant.findMany({ where: { issuerId } });
    assert.ok(grants.every((g) => g.remainingMinor === 0n));
    await assertLedgerHealthy(db, issuerId);
  });

  it('leaves grants untouched when the draw is rolled back with its transaction', async () => {
    const { issuerId, p, earn } = await setup();
    await earn(100, 0, 30);
    await assert.rejects(
      db.$transaction(async (tx) => {
        await drawFromGrants(tx, { ...p, amountMinor: 60, at: plusDays(t0, 1), mode: 'spend' });
        throw new Error('abandon');
      }),
      /abandon/,
    );
    assert.equal((await db.rewardGrant.findFirstOrThrow({ where: { issuerId } })).remainingMinor, 100n);
    await assertLedgerHealthy(db, issuerId);
  });
});
