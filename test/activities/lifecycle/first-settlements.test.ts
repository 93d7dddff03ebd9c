// The first purchases of new merchants and new groups, settled all at once: every account is
// created on first use inside a posting transaction, and concurrent first uses must queue
// behind each other instead of deadlocking (40P01, then a retry), as seen under load before
// accounts were created and locked in one id order (core/domain/ledger/accounts.ts).
// The settlement activity runs directly, with no Temporal retry to hide a failed attempt.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, type TestApp, type TestIssuer } from '../../helpers/app';
import { settledEvent, storedEvent } from '../../helpers/events';
import { activate, groupWithCard, merchantWithOffer } from '../../helpers/scenario';
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
      const { merchant } = await merchantWithOffer(app, {
        brandedBalance: { availabilityDelayDays: 30 },
        offer: { cashbackRateBps: 300, brandedRateBps: 200 },
      });
      merchants.push(merchant);
    }
    const eventIds: string[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const { group, card } = await groupWithCard(issuer);
      for (const merchant of merchants) {
        await activate(issuer, group.id, merchant.id);
        for (let p = 0; p < PER_PAIR; p++) {
          const event = settledEvent(card, { amount: 10_000, merchantId: merchant.id });
          assert.equal((await issuer.call('POST', '/api/v1/incoming-txn', event)).status, 204);
          const row = await storedEvent(db, issuer.id, 'settled', event.id);
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
