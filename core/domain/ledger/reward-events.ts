// Reward events (`brevt_`): the cardholder-facing activity feed. Idempotent by key.
import { Prisma, type RewardEvent as RewardEventRow } from '../../../prisma/generated/client';
import { newId } from '../../ids';
import {
  LedgerError,
  LEDGER_IDEMPOTENCY_CONFLICT,
  LEDGER_INVALID_INPUT,
  REWARD_EVENT_TYPES,
  NEGATIVE_REWARD_EVENT_TYPES,
  SIGNED_REWARD_EVENT_TYPES,
  fromDbMinor,
  requirePositiveMinor,
  type RewardEventType,
} from '../../ledger';
import type { Tx } from './tx';

export interface RecordRewardEventInput {
  idempotencyKey: string;
  /** Defaults to a fresh `brevt_` id; pass one to reference the event before recording it. */
  id?: string;
  issuerId: string;
  chgId: string;
  type: RewardEventType;
  amountMinor: number;
  merchantId?: string | null;
  transactionId?: string | null;
  rewardGrantId?: string | null;
  offerId?: string | null;
  sourceEventId?: string | null;
  description: string;
  occurredAt: Date;
  /** Cashback taken back for branded value a refund could not take from its grants: a
   *  cashback_clawed_back (an earned reward's) or a negative cashback_adjusted (a claim credit's). */
  coversBrandedShortfall?: boolean;
  /** The completion of a cumulative offer the event earns or claws back (1 for the first). */
  completion?: number | null;
}

export interface RewardEvent {
  id: string;
  issuerId: string;
  chgId: string;
  type: RewardEventType;
  amountMinor: number;
  currency: 'usd';
  merchantId: string | null;
  transactionId: string | null;
  rewardGrantId: string | null;
  idempotencyKey: string;
  description: string;
  occurredAt: Date;
  createdAt: Date;
  coversBrandedShortfall: boolean;
}

export function toRewardEvent(row: RewardEventRow): RewardEvent {
  return { ...row, type: row.type as RewardEventType, currency: 'usd', amountMinor: fromDbMinor(row.amountMinor) };
}

export async function recordRewardEvent(
  tx: Tx,
  input: RecordRewardEventInput,
): Promise<{ event: RewardEvent; created: boolean }> {
  requireEventAmount(input.type, input.amountMinor);
  if (!(REWARD_EVENT_TYPES as readonly string[]).includes(input.type))
    throw new LedgerError(LEDGER_INVALID_INPUT, `unknown reward event type ${input.type}`);
  if (!input.idempotencyKey) throw new LedgerError(LEDGER_INVALID_INPUT, 'idempotencyKey is required');
  const data = {
    id: input.id ?? newId('brevt'),
    issuerId: input.issuerId,
    chgId: input.chgId,
    type: input.type,
    amountMinor: BigInt(input.amountMinor),
    currency: 'usd',
    merchantId: input.merchantId ?? null,
    transactionId: input.transactionId ?? null,
    rewardGrantId: input.rewardGrantId ?? null,
    offerId: input.offerId ?? null,
    sourceEventId: input.sourceEventId ?? null,
    idempotencyKey: input.idempotencyKey,
    description: input.description,
    occurredAt: input.occurredAt,
    createdAt: input.occurredAt,
    coversBrandedShortfall: input.coversBrandedShortfall ?? false,
    completion: input.completion ?? null,
  };
  const inserted = await tx.rewardEvent.createMany({ data: [data], skipDuplicates: true });
  if (inserted.count === 1) {
    await addToTotals(tx, [
      {
        issuerId: data.issuerId,
        chgId: data.chgId,
        merchantId: data.merchantId,
        offerId: data.offerId,
        type: data.type,
        amountMinor: input.amountMinor,
      },
    ]);
    return { event: toRewardEvent(data as RewardEventRow), created: true };
  }
  const stored = toRewardEvent(
    await tx.rewardEvent.findUniqueOrThrow({ where: { idempotencyKey: input.idempotencyKey } }),
  );
  // What the cardholder sees as money is content; ids and wording generated per attempt are not.
  const same =
    stored.issuerId === input.issuerId &&
    stored.chgId === input.chgId &&
    stored.type === input.type &&
    stored.amountMinor === input.amountMinor &&
    stored.merchantId === (input.merchantId ?? null) &&
    stored.transactionId === (input.transactionId ?? null) &&
    stored.coversBrandedShortfall === data.coversBrandedShortfall;
  if (!same) {
    throw new LedgerError(
      LEDGER_IDEMPOTENCY_CONFLICT,
      `idempotency key ${input.idempotencyKey} was already used for a different reward event`,
      {
        idempotencyKey: input.idempotencyKey,
        storedEventId: stored.id,
      },
    );
  }
  return { event: stored, created: false };
}

/** A reward event's amount has the sign its type shows in the activity feed. */
export function requireEventAmount(type: RewardEventType, amountMinor: number): void {
  if (SIGNED_REWARD_EVENT_TYPES.includes(type)) {
    if (!Number.isSafeInteger(amountMinor) || amountMinor === 0)
      throw new LedgerError(LEDGER_INVALID_INPUT, `${type} needs a non-zero integer amount`);
  } else if (NEGATIVE_REWARD_EVENT_TYPES.includes(type)) requirePositiveMinor(-amountMinor);
  else requirePositiveMinor(amountMinor);
}

export interface TotalDelta {
  issuerId: string;
  chgId: string;
  merchantId: string | null;
  offerId: string | null;
  type: string;
  amountMinor: number;
}

/**
 * The running totals the summary and the per-group caps read (migration reward_totals), added
 * to in the transaction that records the events; keys in order, as every writer takes them.
 */
export async function addToTotals(tx: Tx, deltas: TotalDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  await tx.$executeRaw`${totalsUpsert(deltas)}`;
}

/** The upsert as SQL, for a caller that writes it inside a larger statement (batch.ts). */
export function totalsUpsert(deltas: TotalDelta[]): Prisma.Sql {
  const col = <T>(pick: (d: TotalDelta) => T) => deltas.map(pick);
  return Prisma.sql`
    INSERT INTO reward_total (issuer_id, chg_id, merchant_id, offer_id, type, amount_minor, event_count)
    SELECT x.issuer, x.chg, coalesce(x.merchant, ''), coalesce(x.offer, ''), x.type, sum(x.amount), count(*)
      FROM unnest(${col((d) => d.issuerId)}::text[], ${col((d) => d.chgId)}::text[], ${col((d) => d.merchantId)}::text[],
                  ${col((d) => d.offerId)}::text[], ${col((d) => d.type)}::text[], ${col((d) => String(d.amountMinor))}::text[]::bigint[])
           AS x(issuer, chg, merchant, offer, type, amount)
     GROUP BY 1, 2, 3, 4, 5
     ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (issuer_id, chg_id, merchant_id, offer_id, type) DO UPDATE
      SET amount_minor = reward_total.amount_minor + EXCLUDED.amount_minor, event_count = reward_total.event_count + EXCLUDED.event_count`;
}
