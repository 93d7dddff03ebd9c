// The expiry activity alone, on the real database: bounded batches, one posting per grant
// however often it runs, and the reward event beside each transfer.
import assert from 'node:assert/strict';
import { createDb, type Db } from '../../../prisma/client';
import { createLogger } from '../../../core/logger';
import { expireDueGrants, expireOne } from '../../../activities/expiry';
import { earnBranded, inTransaction, trialBalance } from '../../../core/domain/ledger';
import {
  assertLedgerHealthy,
  at,
  chgId as newChg,
  key,
  ledgerIssuer,
  merchantId as newMerchant,
  plusDays,
} from '../../helpers/ledger';
import { testDatabaseUrl } from '../../helpers/env';

describe('expireDueGrants', () => {
  let db: Db;
  const logger = createLogger('silent');
  before(() => {
    db = createDb(testDatabaseUrl(), 4);
  });
  after(() => db.$disconnect());

  async function grants(issuerId: string, count: number) {
    const chgId = newChg();
    const merchantId = newMerchant();
    const t0 = at();
    for (let i = 0; i < count; i++) {
      await inTransaction(db, (tx) =>
        earnBranded(tx, {
          idempotencyKey: key('earn'),
          issuerId,
          chgId,
          merchantId,
          amountMinor: 100 + i,
          at: t0,
          availableAt: t0,
          expiresAt: plusDays(t0, 10 + i),
        }),
      );
    }
    return { chgId, merchantId, t0 };
  }

  it('expires in bounded batches and reports whether more are waiting', async () => {
    const issuerId = await ledgerIssuer(db);
    const { t0 } = await grants(issuerId, 5);
    const atMs = plusDays(t0, 30).getTime();
    const first = await expireDueGrants({ db, logger }, { atMs, batchSize: 2, issuerId });
    assert.deepEqual(first, { expired: 2, expiredMinor: 201, failed: 0, more: true });
    const second = await expireDueGrants({ db, logger }, { atMs, batchSize: 2, issuerId });
    const third = await expireDueGrants({ db, logger }, { atMs, batchSize: 2, issuerId });
    assert.deepEqual([second.expired, third.expired, third.more], [2, 1, false]);
    await assert.rejects(expireDueGrants({ db, logger }, { atMs, batchSize: 0, issuerId }), RangeError);
    await assertLedgerHealthy(db, issuerId);
  });

  it('leaves grants alone until they expire, and posts each expiry once however often it runs', async () => {
    const issuerId = await ledgerIssuer(db);
    const { merchantId, t0 } = await grants(issuerId, 2);
    const before = await expireDueGrants(
      { db, logger },
      { atMs: plusDays(t0, 10).getTime() - 1, batchSize: 10, issuerId },
    );
    assert.equal(before.expired, 0);
    const atMs = plusDays(t0, 10).getTime();
    assert.equal((await expireDueGrants({ db, logger }, { atMs, batchSize: 10, issuerId })).expired, 1);
    assert.equal((await expireDueGrants({ db, logger }, { atMs, batchSize: 10, issuerId })).expired, 0);
    // A retry of the same grant after its commit (the activity retried) replays, posting nothing.
    const grant = await db.rewardGrant.findFirstOrThrow({ where: { issuerId, expiresAt: { lte: new Date(atMs) } } });
    const replayed = await inTransaction(db, (tx) =>
      expireOne(tx, { ...grant, amountMinor: 100, remainingMinor: 100 }, new Date(atMs)),
    );
    assert.equal(replayed, 0);
    assert.equal(await db.ledgerTransfer.count({ where: { issuerId, kind: 'expire_branded' } }), 1);
    const events = await db.rewardEvent.findMany({ where: { issuerId, type: 'branded_expired' } });
    assert.deepEqual(
      events.map((e) => [e.amountMinor, e.rewardGrantId, e.merchantId]),
      [[100n, grant.id, merchantId]],
    );
    const breakage = (await trialBalance(db, { issuerId })).accounts.find((a) => a.kind === 'breakage');
    assert.equal(breakage?.balanceMinor, 100);
    await assertLedgerHealthy(db, issuerId);
  });
});
