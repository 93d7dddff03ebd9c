// The ledger watch (worker/ledger-watch.ts): its reading of the trial balance on PostgreSQL, and
// what it does with each reading: the gauge RewardsTrialBalanceNotZero watches, an error line when
// the ledger does not balance, the last value kept (and one warning) when the database is away.
import assert from 'node:assert/strict';
import pino from 'pino';
import { createDb, type Db } from '../../prisma/client';
import { testDatabaseUrl } from '../helpers/env';
import { ledgerIssuer } from '../helpers/ledger';
import { newId } from '../../core/ids';
import { registry } from '../../core/metrics';
import { ledgerTrialBalanceMinor, startLedgerWatch } from '../../worker/ledger-watch';

async function gaugeValue(): Promise<number> {
  const metric = await registry.getSingleMetric('rewards_ledger_trial_balance_minor')!.get();
  return metric.values[0]?.value ?? NaN;
}

/** A logger whose lines the test reads. */
function recordingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe('ledger watch', () => {
  let db: Db;
  before(() => (db = createDb(testDatabaseUrl(), 2)));
  after(() => db.$disconnect());

  it("sums every account's balance signed by its normal side", async () => {
    const before = await ledgerTrialBalanceMinor(db);
    const issuerId = await ledgerIssuer(db);
    // Written around the ledger, in a transaction rolled back: a liability credited 250 with no debit.
    await assert.rejects(
      db.$transaction(async (tx) => {
        await tx.ledgerAccount.create({
          data: {
            id: `${issuerId}:chg_cashback:${newId('chg')}`,
            issuerId,
            kind: 'chg_cashback',
            normalSide: 'credit',
            balanceMinor: 250n,
          },
        });
        assert.equal(await ledgerTrialBalanceMinor(tx), before - 250);
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.equal(await ledgerTrialBalanceMinor(db), before);
  });

  it('sets the gauge at each reading, logs an error off zero and one warning while the database is away', async () => {
    const readings: Array<bigint | Error> = [0n, -250n, new Error('connection refused'), new Error('still refused')];
    const fake = {
      $queryRaw: async () => {
        const next = readings.shift() ?? 0n;
        if (next instanceof Error) throw next;
        return [{ total: next }];
      },
    } as unknown as Db;
    const { logger, lines } = recordingLogger();
    const watch = startLedgerWatch({ db: fake, logger }, 5);
    try {
      for (let i = 0; i < 200 && readings.length > 0; i++) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      await watch.stop();
    }
    assert.equal(await gaugeValue(), 0, 'back to 0 with the readings after the outage');
    const messages = lines.map((l) => `${l.level} ${l.msg}`);
    assert.deepEqual(
      messages.filter((m) => !m.startsWith('30 ')),
      ['50 the ledger does not balance', '40 ledger watch could not read the trial balance; retrying'],
    );
  });

  it('keeps the value it last read while the database is away', async () => {
    const readings: Array<bigint | Error> = [-7n, new Error('connection refused')];
    const fake = {
      $queryRaw: async () => {
        const next = readings.shift() ?? new Error('connection refused');
        if (next instanceof Error) throw next;
        return [{ total: next }];
      },
    } as unknown as Db;
    const watch = startLedgerWatch({ db: fake, logger: recordingLogger().logger }, 5);
    await new Promise((r) => setTimeout(r, 50));
    await watch.stop();
    assert.equal(await gaugeValue(), -7);
  });
});
