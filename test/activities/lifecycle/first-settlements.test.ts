// The first purchases of new merchants and new groups, settled all at once: every account is
// created on first use inside a posting transaction, and concurrent first uses must queue
// behind each other instead of deadlocking (40P01, then a retry), as seen under load before
// accounts were created and locked in one id order (core/domain/ledger/accounts.ts).
// The settlement activity runs directly, with no Temporal retry to hide a failed attempt.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../../helpers/app';
import { createMerchant, createOffer, daysFromNow } from '../../helpers/catalogue';
import { settledEvent, cardOf } from '../../helpers/events';
import { groupBody } from '../../helpers/groups';
import { assertLedgerHealthy } from '../../helpers/ledger';
import { testDatabaseUrl } from '../../helpers/env';
import { createLogger } from '../../../core/logger';
import { createDb, type Db } from '../../../prisma/client';
import { settleTransaction } from '../../../activities/lifecycle/settle';

const GROUPS = 6;
const MERCHANTS = 2;
const PER_PAIR = 2;

describe('first settlements of new merchants and groups, all at once', function () {
  this.timeout(120_000);
  let app: TestApp;
  let issuer: TestIssuer;
  let db: Db;

  before(async () => {
    app = await startTestApp(); // no hand-over: the test runs the activity itself
    issuer = await newIssuer(app);
    // A pool as large as the purchases, so every settlement really runs at the same time.
    db = createDb(testDatabaseUrl(), GROUPS * MERCHANTS * PER_PAIR);
  });
  after(async () => {
    await db.$disconnect();
    await app.close();
  });

  it('settles 24 purchases over 12 new account sets in parallel, each on its first attempt', async () => {
    const merchants = [];
    for (let m = 0; m < MERCHANTS; m++) {
      // Earned balance becomes available in 30 days: no purchase here spends another's.
      const merchant = await createMerchant(app, {
        brandedBalance: { enabled: true, spendMinimumMinor: 0, availabilityDelayDays: 30, expiryDays: 365 },
      });
      await createOffer(app, merchant.id, { cashbackRateBps: 300, brandedRateBps: 200, startsAt: daysFromNow(-1) });
      merchants.push(merchant);
    }
    const eventIds: string[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
      for (const merchant of merchants) {
        await issuer.call('PUT', `/api/v2/chg/${group.id}/merchant/${merchant.id}/activation`, {});
        for (let p = 0; p < PER_PAIR; p++) {
          const event = settledEvent(cardOf(group), { amount: 10_000, merchantId: merchant.id });
          assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
          const row = await db.ingestedEvent.findUniqueOrThrow({
            where: { issuerId_kind_externalId: { issuerId: issuer.id, kind: 'settled', externalId: event.id } },
          });
          eventIds.push(row.id);
        }
      }
    }
    assert.equal(await db.ledgerAccount.count({ where: { issuerId: issuer.id } }), 0, 'no account exists yet');

    const deps = { db, logger: createLogger('silent'), clock: { now: () => new Date() } };
    const outcomes = await Promise.allSettled(eventIds.map((eventId) => settleTransaction(deps, { eventId })));
    const failures = outcomes.flatMap((o) =>
      o.status === 'rejected' ? [String((o.reason as Error)?.message ?? o.reason).slice(0, 200)] : [],
    );
    assert.deepEqual(failures, [], 'no settlement failed (a deadlock would surface here)');
    assert.ok(outcomes.every((o) => o.status === 'fulfilled' && o.value.status === 'matched'));

    // 2 merchant receivables, 6 cashback accounts, 12 branded accounts; 300 + 200 bps of $100.
    assert.equal(
      await db.ledgerAccount.count({ where: { issuerId: issuer.id } }),
      MERCHANTS + GROUPS + GROUPS * MERCHANTS,
    );
    const transfers = await db.ledgerTransfer.findMany({ where: { issuerId: issuer.id } });
    assert.equal(transfers.length, eventIds.length * 2);
    assert.equal(
      transfers.reduce((sum, t) => sum + Number(t.amountMinor), 0),
      eventIds.length * 500,
    );
    await assertLedgerHealthy(db, issuer.id);
  });
});
