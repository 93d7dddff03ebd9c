// Reward events with their ledger transfers, for read tests that need history without running
// purchases through Temporal: each event is posted by the real ledger functions in one database
// transaction (as the lifecycle posts it), and the bulk fixture writes thousands in one statement
// while keeping every ledger invariant (entries balanced, cached balances, running totals).
import type { Db } from '../../prisma/client';
import { newId } from '../../core/ids';
import { accounts } from '../../core/ledger';
import { earnBranded, inTransaction, postTransfer, recordRewardEvent, spendBranded } from '../../core/domain/ledger';

export interface EventPlace {
  issuerId: string;
  chgId: string;
  merchantId: string;
  at: Date;
  /** The purchase the event belongs to. */
  transactionId?: string | null;
  /** The refund that caused a clawback. */
  sourceEventId?: string | null;
}

/** A cashback_earned event and its earn_cashback transfer; returns the event id. */
export async function cashbackEarned(db: Db, place: EventPlace, amountMinor: number): Promise<string> {
  return cashbackEvent(db, place, amountMinor, 'cashback_earned', 'earn_cashback');
}

/** A cashback_clawed_back event and its clawback_cashback transfer. */
export async function cashbackClawedBack(db: Db, place: EventPlace, amountMinor: number): Promise<string> {
  return cashbackEvent(db, place, amountMinor, 'cashback_clawed_back', 'clawback_cashback');
}

async function cashbackEvent(
  db: Db,
  place: EventPlace,
  amountMinor: number,
  type: 'cashback_earned' | 'cashback_clawed_back',
  kind: 'earn_cashback' | 'clawback_cashback',
) {
  const id = newId('brevt');
  await inTransaction(db, async (tx) => {
    await recordRewardEvent(tx, {
      id,
      idempotencyKey: `fixture:${id}`,
      issuerId: place.issuerId,
      chgId: place.chgId,
      type,
      merchantId: place.merchantId,
      amountMinor,
      transactionId: place.transactionId ?? null,
      sourceEventId: place.sourceEventId ?? null,
      description: type,
      occurredAt: place.at,
    });
    await postTransfer(tx, {
      idempotencyKey: `fixture:${id}`,
      kind,
      issuerId: place.issuerId,
      chgId: place.chgId,
      merchantId: place.merchantId,
      amountMinor,
      rewardEventId: id,
      transactionId: place.transactionId ?? null,
      at: place.at,
    });
  });
  return id;
}

/** A branded_earned event, its transfer and grant (available at once unless told). */
export async function brandedEarned(
  db: Db,
  place: EventPlace,
  amountMinor: number,
  grant: { availableAt?: Date; expiresAt: Date },
): Promise<string> {
  const id = newId('brevt');
  await inTransaction(db, async (tx) => {
    const earned = await earnBranded(tx, {
      idempotencyKey: `fixture:${id}`,
      issuerId: place.issuerId,
      chgId: place.chgId,
      merchantId: place.merchantId,
      amountMinor,
      rewardEventId: id,
      transactionId: place.transactionId ?? null,
      at: place.at,
      availableAt: grant.availableAt ?? place.at,
      expiresAt: grant.expiresAt,
    });
    await recordRewardEvent(tx, {
      id,
      idempotencyKey: `fixture:${id}`,
      issuerId: place.issuerId,
      chgId: place.chgId,
      type: 'branded_earned',
      merchantId: place.merchantId,
      amountMinor,
      transactionId: place.transactionId ?? null,
      rewardGrantId: earned.grant.id,
      description: 'branded_earned',
      occurredAt: place.at,
    });
  });
  return id;
}

/** A branded_spent event drawing up to `amountMinor` of available balance; returns the event id. */
export async function brandedSpent(db: Db, place: EventPlace, amountMinor: number): Promise<string> {
  const id = newId('brevt');
  await inTransaction(db, async (tx) => {
    const draw = await spendBranded(tx, {
      idempotencyKey: `fixture:${id}`,
      issuerId: place.issuerId,
      chgId: place.chgId,
      merchantId: place.merchantId,
      maxAmountMinor: amountMinor,
      rewardEventId: id,
      transactionId: place.transactionId ?? null,
      at: place.at,
    });
    await recordRewardEvent(tx, {
      id,
      idempotencyKey: `fixture:${id}`,
      issuerId: place.issuerId,
      chgId: place.chgId,
      type: 'branded_spent',
      merchantId: place.merchantId,
      amountMinor: draw.drawnMinor,
      transactionId: place.transactionId ?? null,
      rewardGrantId: draw.allocations[0]?.grantId ?? null,
      description: 'branded_spent',
      occurredAt: place.at,
    });
  });
  return id;
}

/**
 * `count` cashback_earned events one `stepMs` apart from `start`, each with its earn_cashback
 * transfer and two entries, written in one statement; then the two accounts' cached balances
 * and the group's running total, so the trial balance stays 0 and every invariant holds.
 * Returns the sum of their amounts.
 */
export async function bulkCashbackEarned(
  db: Db,
  place: { issuerId: string; chgId: string; merchantId: string },
  count: number,
  start: Date,
  stepMs: number,
): Promise<number> {
  // Creates the accounts and the running-total row the bulk insert then adds to.
  const firstAmount = 100;
  await cashbackEarned(db, { ...place, at: new Date(start.getTime() - stepMs) }, firstAmount);
  const debit = accounts.merchantReceivable(place.issuerId, place.merchantId).id;
  const credit = accounts.chgCashback(place.issuerId, place.chgId).id;
  return inTransaction(db, async (tx) => {
    const [{ total }] = await tx.$queryRaw<{ total: bigint }[]>`
      WITH ev AS MATERIALIZED (
        SELECT 'brevt_' || gen_random_uuid() AS id, gen_random_uuid()::text AS tid, (100 + g % 97)::bigint AS amount,
               ${start}::timestamptz + (g - 1) * ${stepMs} * interval '1 millisecond' AS at
          FROM generate_series(1, ${count}) g),
      events AS (
        INSERT INTO reward_event (id, issuer_id, chg_id, type, amount_minor, currency, merchant_id, idempotency_key, description, occurred_at, created_at)
        SELECT id, ${place.issuerId}, ${place.chgId}, 'cashback_earned', amount, 'usd', ${place.merchantId}, 'fixture:' || id, 'bulk cashback', at, at FROM ev),
      transfers AS (
        INSERT INTO ledger_transfer (id, issuer_id, idempotency_key, kind, debit_account_id, credit_account_id, amount_minor, reward_event_id, created_at)
        SELECT tid, ${place.issuerId}, 'fixture:' || tid, 'earn_cashback', ${debit}, ${credit}, amount, id, at FROM ev),
      entries AS (
        INSERT INTO ledger_entry (issuer_id, transfer_id, account_id, amount_minor, created_at)
        SELECT ${place.issuerId}, tid, ${debit}, amount, at FROM ev
        UNION ALL
        SELECT ${place.issuerId}, tid, ${credit}, -amount, at FROM ev)
      SELECT sum(amount)::bigint AS total FROM ev`;
    // Both accounts grow by the total on their normal side (receivable: debit; cashback: credit).
    await tx.$executeRaw`UPDATE ledger_account SET balance_minor = balance_minor + ${total} WHERE id IN (${debit}, ${credit})`;
    await tx.$executeRaw`
      UPDATE reward_total SET amount_minor = amount_minor + ${total}, event_count = event_count + ${count}
       WHERE issuer_id = ${place.issuerId} AND chg_id = ${place.chgId} AND merchant_id = ${place.merchantId} AND offer_id = '' AND type = 'cashback_earned'`;
    return Number(total) + firstAmount;
  }).then(async (sum) => {
    // What autovacuum would do after a bulk load: fresh statistics, so plans are those of a live database.
    await db.$executeRawUnsafe('ANALYZE reward_event, ledger_transfer, ledger_entry');
    return sum;
  });
}
