// Reads the ledger's trial balance every minute into rewards_ledger_trial_balance_minor, which
// the RewardsTrialBalanceNotZero alert watches. Every posting writes both of its accounts'
// balances in one transaction, so any consistent read sums to zero; a non-zero reading means a
// posting broke double entry, or a balance was written around the ledger. It reads the cached
// balances (one row per account), not the entries (one per posting and growing): the entries'
// own checks are core/domain/ledger/invariants.ts, for the operator and the tests.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import { fromDbMinor } from '../core/money';
import { ledgerTrialBalance } from '../core/metrics';
import { runPeriodically, throttled, type Periodic } from './periodic';

export const TRIAL_BALANCE_INTERVAL_MS = 60_000;

/** A failing read (the database away) is logged at most this often. */
const WARN_EVERY_MS = 5 * 60_000;

/** The sum of every account's balance signed by its normal side: 0 in a healthy ledger. */
export async function ledgerTrialBalanceMinor(db: Pick<Db, '$queryRaw'>): Promise<number> {
  const [{ total }] = await db.$queryRaw<Array<{ total: bigint }>>`
    SELECT COALESCE(SUM(CASE normal_side WHEN 'debit' THEN balance_minor ELSE -balance_minor END), 0)::bigint AS total
      FROM ledger_account`;
  return fromDbMinor(total);
}

export type LedgerWatch = Periodic;

export function startLedgerWatch(
  deps: { db: Pick<Db, '$queryRaw'>; logger: Logger },
  intervalMs = TRIAL_BALANCE_INTERVAL_MS,
): LedgerWatch {
  // The gauge keeps its last reading while the database is away: an outage is the database's
  // alerts' to report.
  const warn = throttled(WARN_EVERY_MS, (err: unknown) =>
    deps.logger.warn({ err }, 'ledger watch could not read the trial balance; retrying'),
  );
  const read = async () => {
    try {
      const total = await ledgerTrialBalanceMinor(deps.db);
      ledgerTrialBalance.set(total);
      if (total !== 0) deps.logger.error({ trialBalanceMinor: total }, 'the ledger does not balance');
    } catch (err) {
      warn(err);
    }
  };
  return runPeriodically(read, { intervalMs, runAtStart: true });
}
