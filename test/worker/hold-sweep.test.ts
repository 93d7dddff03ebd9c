// The hold sweep (worker/hold-sweep.ts): started with the worker, it takes the holds that matured
// out of their groups' running totals on its first turn, and stops when asked.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '../../prisma/client';
import { testDatabaseUrl } from '../helpers/env';
import { chgId, DAY_MS, ledgerIssuer } from '../helpers/ledger';
import { waitFor } from '../helpers/webhooks';
import { createLogger } from '../../core/logger';
import { startHoldSweep } from '../../worker/hold-sweep';

describe('hold sweep', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 2)));
  after(() => db.$disconnect());

  it('takes matured holds out of the totals on its first turn', async () => {
    const issuerId = await ledgerIssuer(db);
    const chg = chgId();
    const hold = async (minor: number, payableAt: Date) => {
      const id = `txn_${randomUUID()}`;
      await db.$executeRaw`
        INSERT INTO ingested_event (id, issuer_id, kind, external_id, fingerprint, state, payload, chg_id, cardholder_id,
                                    card_id, amount_minor, currency, event_created_at, workflow_id)
        VALUES (${id}, ${issuerId}, 'settled', ${id}, 'f', 'settled', '{}', ${chg}, 'ch', 'card', 10000, 'usd', now(), ${`txn/${id}`})`;
      await db.$executeRaw`
        INSERT INTO cashback_hold (transaction_id, issuer_id, chg_id, amount_minor, remaining_minor, payable_at)
        VALUES (${id}, ${issuerId}, ${chg}, ${minor}, ${minor}, ${payableAt})`;
    };
    await hold(300, new Date(Date.now() - DAY_MS));
    await hold(200, new Date(Date.now() + 30 * DAY_MS));
    const total = () => db.cashbackHeld.findUniqueOrThrow({ where: { issuerId_chgId: { issuerId, chgId: chg } } });
    assert.equal((await total()).heldMinor, 500n, 'every hold counts until the first sweep');

    const sweep = startHoldSweep({ db, logger: createLogger('silent') }, 60_000);
    try {
      await waitFor('the sweep to take the matured hold out', async () =>
        (await total()).heldMinor === 200n ? true : undefined,
      );
    } finally {
      await sweep.stop();
    }
  });
});
