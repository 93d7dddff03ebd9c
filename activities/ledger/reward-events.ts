// Reward events (`brevt_`): the cardholder-facing activity feed. Idempotent by key.
import type { RewardEvent as RewardEventRow } from '../../prisma/generated/client';
import { newId } from '../../core/ids';
import { LedgerError, LEDGER_IDEMPOTENCY_CONFLICT, LEDGER_INVALID_INPUT, REWARD_EVENT_TYPES, fromDbMinor, requirePositiveMinor, type RewardEventType } from '../../core/ledger';
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
}

export function toRewardEvent(row: RewardEventRow): RewardEvent {
  return { ...row, type: row.type as RewardEventType, currency: 'usd', amountMinor: fromDbMinor(row.amountMinor) };
}

export async function recordRewardEvent(tx: Tx, input: RecordRewardEventInput): Promise<{ event: RewardEvent; created: boolean }> {
  requirePositiveMinor(input.amountMinor);
  if (!(REWARD_EVENT_TYPES as readonly string[]).includes(input.type)) throw new LedgerError(LEDGER_INVALID_INPUT, `unknown reward event type ${input.type}`);
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
  };
  const inserted = await tx.rewardEvent.createMany({ data: [data], skipDuplicates: true });
  if (inserted.count === 1) return { event: toRewardEvent(data as RewardEventRow), created: true };
  const stored = toRewardEvent(await tx.rewardEvent.findUniqueOrThrow({ where: { idempotencyKey: input.idempotencyKey } }));
  // What the cardholder sees as money is content; ids and wording generated per attempt are not.
  const same = stored.issuerId === input.issuerId && stored.chgId === input.chgId && stored.type === input.type &&
    stored.amountMinor === input.amountMinor && stored.merchantId === (input.merchantId ?? null) && stored.transactionId === (input.transactionId ?? null);
  if (!same) {
    throw new LedgerError(LEDGER_IDEMPOTENCY_CONFLICT, `idempotency key ${input.idempotencyKey} was already used for a different reward event`, {
      idempotencyKey: input.idempotencyKey, storedEventId: stored.id,
    });
  }
  return { event: stored, created: false };
}
