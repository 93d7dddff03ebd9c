// The expiry job's activity (DESIGN.md, Transaction lifecycle: "a scheduled workflow expires
// branded balance grants"). Each call handles one bounded batch of grants past `expiresAt`
// that still hold value: per grant, ONE database transaction posts the expiry transfer
// (chg_branded → breakage:<merchant>) and records its `branded_expired` reward event and its
// reward_expired webhook.
// Idempotent: the transfer key is `expire:<grantId>`, so a retried or overlapping run finds
// the stored transfer and posts nothing twice; an expired grant holds no value afterwards
// and drops out of the work list.
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';
import { newId } from '../../core/ids';
import {
  expireGrant,
  inTransaction,
  listExpiredGrants,
  recordRewardEvent,
  type Grant,
  type Tx,
} from '../../core/domain/ledger';
import { ensureAndLockAccounts } from '../../core/domain/ledger/accounts';
import { accounts } from '../../core/ledger';
import { issuerClockAt } from '../issuer-clock';
import { recordFactWebhooks } from '../../core/domain/webhook-records';
import { factKey } from '../../core/webhooks/fact-webhooks';

/** The most grants one activity call looks at: keeps each call well inside its timeout. */
export const MAX_EXPIRY_BATCH = 1000;

export interface ExpiryDeps {
  db: Db;
  logger: Logger;
}

export interface ExpireBatchInput {
  /** The workflow's clock, so time-skipping tests and replays expire at workflow time. */
  atMs: number;
  batchSize: number;
  /**
   * Restricts the batch to one issuer (tests; an operator re-run; a sandbox clock advance).
   * Such a batch runs at that issuer's clock: `atMs` plus its sandbox clock offset.
   */
  issuerId?: string;
}

export interface ExpireBatchResult {
  /** Grants whose expiry this call posted. */
  expired: number;
  expiredMinor: number;
  /** Grants that failed; logged, left for the next run. */
  failed: number;
  /** The batch was full: more expired grants may be waiting. */
  more: boolean;
}

export async function expireDueGrants(deps: ExpiryDeps, input: ExpireBatchInput): Promise<ExpireBatchResult> {
  if (!Number.isSafeInteger(input.batchSize) || input.batchSize < 1 || input.batchSize > MAX_EXPIRY_BATCH) {
    throw new RangeError(`batchSize must be 1..${MAX_EXPIRY_BATCH}`);
  }
  // The hourly run over every issuer expires at real time. A sandbox issuer whose clock runs
  // ahead is swept by the run its clock advance starts (issuerId set); between advances its
  // reads already count value past expiry on its clock as expired (api/balances/summary.ts).
  const at = input.issuerId ? await issuerClockAt(deps.db, input.issuerId, new Date(input.atMs)) : new Date(input.atMs);
  const grants = await inTransaction(deps.db, (tx) =>
    listExpiredGrants(tx, { at, limit: input.batchSize, issuerId: input.issuerId }),
  );
  const result: ExpireBatchResult = { expired: 0, expiredMinor: 0, failed: 0, more: grants.length === input.batchSize };
  for (const grant of grants) {
    try {
      const posted = await inTransaction(deps.db, (tx) => expireOne(tx, grant, at));
      if (posted > 0) {
        result.expired += 1;
        result.expiredMinor += posted;
      }
    } catch (err) {
      // One bad grant must not hold up the others; it stays in the list for the next run.
      result.failed += 1;
      deps.logger.error({ err, grantId: grant.id, issuerId: grant.issuerId }, 'grant expiry failed');
    }
  }
  return result;
}

/** Posts one grant's expiry and its reward event; returns the amount moved to breakage. */
export async function expireOne(tx: Tx, grant: Grant, at: Date): Promise<number> {
  // Accounts before grants, as every poster takes them: a settlement spending from this
  // group's grants holds the branded account while it reads and draws them.
  await ensureAndLockAccounts(
    tx,
    [
      accounts.chgBranded(grant.issuerId, grant.chgId, grant.merchantId),
      accounts.breakage(grant.issuerId, grant.merchantId),
    ],
    at,
  );
  const rewardEventId = newId('brevt');
  const draw = await expireGrant(tx, {
    issuerId: grant.issuerId,
    grantId: grant.id,
    at,
    idempotencyKey: `expire:${grant.id}`,
    rewardEventId,
  });
  if (draw.drawnMinor === 0) return 0;
  await recordRewardEvent(tx, {
    id: rewardEventId,
    idempotencyKey: `expire:${grant.id}:branded_expired`,
    issuerId: grant.issuerId,
    chgId: grant.chgId,
    type: 'branded_expired',
    amountMinor: draw.drawnMinor,
    merchantId: grant.merchantId,
    transactionId: grant.sourceTransactionId,
    rewardGrantId: grant.id,
    description: 'Balance expired',
    occurredAt: at,
  });
  if (!draw.created) return 0;
  // In the expiry's own transaction: the event exists exactly when the breakage was posted.
  await recordFactWebhooks(tx, [
    {
      issuerId: grant.issuerId,
      type: 'reward_expired',
      factKey: factKey.rewardExpired(grant.id),
      sourceId: grant.id,
      at,
      data: {
        chgId: grant.chgId,
        merchantId: grant.merchantId,
        rewardGrantIds: [grant.id],
        currency: 'usd',
        amountMinor: draw.drawnMinor,
        rewardEventId,
      },
    },
  ]);
  return draw.drawnMinor;
}

export function createExpiryActivities(deps: ExpiryDeps) {
  return {
    expireDueGrants: (input: ExpireBatchInput) => expireDueGrants(deps, input),
  };
}

export type ExpiryActivities = ReturnType<typeof createExpiryActivities>;
