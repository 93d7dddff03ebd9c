// The reward notices scan: reward_available and reward_expiring for the branded grants whose
// next notice has fallen due (docs/decisions/0028-reward-notices-by-scan.md). It runs in the
// same scheduled workflow as the expiry (workflows/expire-grants.ts), hourly at real time and
// at a sandbox issuer's new now after each clock advance.
//
// One batch is ONE database transaction: the due grants are read and locked (SKIP LOCKED, so
// overlapping scans share the work instead of waiting), the rules say what each is due
// (core/rules/reward-notices.ts), the webhook records are written, and each grant's notice
// state and next due time are stored. A scan killed mid-way commits nothing of its batch; a
// second scan over the same instant finds nothing due; and each record's idempotency key is
// its fact (factKey), so not even a lost update could send a fact twice.
import { Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { fromDbMinor } from '../../core/money';
import { planNotices, type NoticePlan } from '../../core/rules/reward-notices';
import { factKey } from '../../core/webhooks/fact-webhooks';
import { recordFactWebhooks, type FactWebhook } from '../../core/domain/webhook-records';

/** The most grants one batch looks at: keeps each transaction short. */
export const MAX_NOTICE_BATCH = 1000;

export interface NoticeDeps {
  db: Db;
  logger: Logger;
}

export interface NoticeBatchInput {
  /** The workflow's clock, so time-skipping tests and replays agree on "now". */
  atMs: number;
  batchSize: number;
  /** One issuer at its own clock (a sandbox clock advance); every issuer at `atMs` when absent. */
  issuerId?: string;
}

export interface NoticeBatchResult {
  /** Grants looked at. */
  grants: number;
  /** Webhook records written (facts of types the issuer's endpoint subscribes to). */
  recorded: number;
  /** The batch was full: more grants may be due. */
  more: boolean;
}

interface DueGrant {
  id: string;
  issuerId: string;
  chgId: string;
  merchantId: string;
  sourceTransactionId: string | null;
  remainingMinor: bigint;
  availableAt: Date;
  expiresAt: Date;
  availableNoticed: boolean;
  expiryNoticedDays: number | null;
  leadDays: number[];
  /** The issuer's clock at the scan's `at`. */
  now: Date;
}

export async function sendDueRewardNotices(deps: NoticeDeps, input: NoticeBatchInput): Promise<NoticeBatchResult> {
  if (!Number.isSafeInteger(input.batchSize) || input.batchSize < 1 || input.batchSize > MAX_NOTICE_BATCH)
    throw new RangeError(`batchSize must be 1..${MAX_NOTICE_BATCH}`);
  return sqlTransaction(deps.db, async (tx) => {
    const grants = await lockDueGrants(tx, input);
    const planned = grants.map((g) => ({ grant: g, plan: planNotices(toNoticeState(g), g.leadDays, g.now) }));
    const recorded = await recordFactWebhooks(
      tx,
      planned.flatMap(({ grant, plan }) => noticeWebhooks(grant, plan)),
    );
    await storeNoticeState(tx, planned);
    return { grants: grants.length, recorded: recorded.length, more: grants.length === input.batchSize };
  });
}

/**
 * The grants whose next notice is due, locked. The scan over every issuer compares with real
 * time; a sandbox issuer, whose clock runs ahead, is scanned at its own clock by the run its
 * clock advance starts. Either way each grant is planned at its issuer's clock.
 */
async function lockDueGrants(tx: SqlTx, input: NoticeBatchInput): Promise<DueGrant[]> {
  const at = new Date(input.atMs);
  const due = input.issuerId
    ? Prisma.sql`g.issuer_id = ${input.issuerId} AND g.next_notice_at <= ${at}::timestamptz + i.clock_offset_ms * interval '1 millisecond'`
    : Prisma.sql`g.next_notice_at <= ${at}::timestamptz`;
  return tx.$queryRaw<DueGrant[]>`
    SELECT g.id, g.issuer_id AS "issuerId", g.chg_id AS "chgId", g.merchant_id AS "merchantId",
           g.source_transaction_id AS "sourceTransactionId", g.remaining_minor AS "remainingMinor",
           g.available_at AS "availableAt", g.expires_at AS "expiresAt",
           g.available_noticed_at IS NOT NULL AS "availableNoticed", g.expiry_noticed_days AS "expiryNoticedDays",
           i.expiry_notice_days AS "leadDays",
           ${at}::timestamptz + i.clock_offset_ms * interval '1 millisecond' AS now
      FROM reward_grant g JOIN issuer i ON i.id = g.issuer_id
     WHERE g.next_notice_at IS NOT NULL AND ${due}
     ORDER BY g.next_notice_at
     LIMIT ${input.batchSize}
       FOR UPDATE OF g SKIP LOCKED`;
}

function toNoticeState(g: DueGrant) {
  return {
    availableAt: g.availableAt,
    expiresAt: g.expiresAt,
    remainingMinor: fromDbMinor(g.remainingMinor),
    availableNoticed: g.availableNoticed,
    expiryNoticedDays: g.expiryNoticedDays,
  };
}

function noticeWebhooks(g: DueGrant, plan: NoticePlan): FactWebhook[] {
  const remainingMinor = fromDbMinor(g.remainingMinor);
  const base = { issuerId: g.issuerId, sourceId: g.id, at: g.now };
  return plan.notices.map((notice): FactWebhook => {
    if (notice.type === 'reward_available')
      return {
        ...base,
        type: 'reward_available',
        factKey: factKey.rewardAvailable(g.id),
        data: {
          chgId: g.chgId,
          merchantId: g.merchantId,
          rewardGrantId: g.id,
          transactionId: g.sourceTransactionId,
          currency: 'usd',
          amountMinor: remainingMinor,
          availableAt: g.availableAt.toISOString(),
          expiresAt: g.expiresAt.toISOString(),
        },
      };
    return {
      ...base,
      type: 'reward_expiring',
      factKey: factKey.rewardExpiring(g.id, notice.daysBeforeExpiry),
      data: {
        chgId: g.chgId,
        merchantId: g.merchantId,
        rewardGrantId: g.id,
        currency: 'usd',
        remainingMinor,
        expiresAt: g.expiresAt.toISOString(),
        daysBeforeExpiry: notice.daysBeforeExpiry,
      },
    };
  });
}

/** Each grant's notice state and next due time, in one statement. */
async function storeNoticeState(tx: SqlTx, planned: Array<{ grant: DueGrant; plan: NoticePlan }>): Promise<void> {
  if (planned.length === 0) return;
  await tx.$executeRaw`
    UPDATE reward_grant g
       SET available_noticed_at = CASE WHEN p.available_noticed THEN coalesce(g.available_noticed_at, p.now) END,
           expiry_noticed_days = p.expiry_noticed_days,
           next_notice_at = p.next_notice_at
      FROM unnest(${planned.map((p) => p.grant.id)}::text[], ${planned.map((p) => p.plan.availableNoticed)}::boolean[],
                  ${planned.map((p) => p.plan.expiryNoticedDays)}::int[], ${planned.map((p) => p.plan.nextNoticeAt)}::timestamptz[],
                  ${planned.map((p) => p.grant.now)}::timestamptz[])
           AS p(id, available_noticed, expiry_noticed_days, next_notice_at, now)
     WHERE g.id = p.id`;
}

export function createNoticeActivities(deps: NoticeDeps) {
  return {
    sendDueRewardNotices: (input: NoticeBatchInput) => sendDueRewardNotices(deps, input),
  };
}

export type NoticeActivities = ReturnType<typeof createNoticeActivities>;
