// Branded-balance grants (`rg_`): buckets inside a chg_branded liability account. Each is
// funded by exactly one earn_branded transfer; draws take value out in FIFO order.
import type { RewardGrant as RewardGrantRow } from '../../../prisma/generated/client';
import { Prisma } from '../../../prisma/generated/client';
import { newId } from '../../ids';
import {
  LedgerError,
  LEDGER_INVALID_INPUT,
  accounts,
  allocateDraw,
  assert,
  compareFifo,
  fromDbMinor,
  requirePositiveMinor,
  type Allocation,
} from '../../ledger';
import type { Tx } from './tx';

/** What may fund a grant: a purchase's earn, or customer service's branded credit. */
const FUNDING_KINDS: readonly string[] = ['earn_branded', 'adjust_credit_branded'];

/** A draw looks at no more grants than this; a group holding more at one merchant draws
 *  what these cover, and the rest on the next draw. */
export const MAX_GRANTS_PER_DRAW = 500;

export interface Grant {
  id: string;
  issuerId: string;
  chgId: string;
  merchantId: string;
  accountId: string;
  earnTransferId: string;
  sourceTransactionId: string | null;
  amountMinor: number;
  remainingMinor: number;
  availableAt: Date;
  expiresAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

export function toGrant(row: RewardGrantRow): Grant {
  return { ...row, amountMinor: fromDbMinor(row.amountMinor), remainingMinor: fromDbMinor(row.remainingMinor) };
}

export interface CreateGrantInput {
  issuerId: string;
  chgId: string;
  merchantId: string;
  /** The earn_branded (or adjust_credit_branded) transfer that funds the grant: its amount and account must match. */
  earnTransferId: string;
  sourceTransactionId?: string | null;
  amountMinor: number;
  availableAt: Date;
  expiresAt: Date;
  at: Date;
}

/** Creates the grant of an earn; idempotent on the earn transfer (one grant per earn). */
export async function createGrant(tx: Tx, input: CreateGrantInput): Promise<{ grant: Grant; created: boolean }> {
  requirePositiveMinor(input.amountMinor);
  if (!(input.availableAt < input.expiresAt))
    throw new LedgerError(LEDGER_INVALID_INPUT, 'availableAt must be before expiresAt');
  const accountId = accounts.chgBranded(input.issuerId, input.chgId, input.merchantId).id;
  const earn = await tx.ledgerTransfer.findUnique({ where: { id: input.earnTransferId } });
  if (
    !earn ||
    !FUNDING_KINDS.includes(earn.kind) ||
    earn.creditAccountId !== accountId ||
    fromDbMinor(earn.amountMinor) !== input.amountMinor
  ) {
    throw new LedgerError(
      LEDGER_INVALID_INPUT,
      `transfer ${input.earnTransferId} is not an earn_branded or adjust_credit_branded of ${input.amountMinor} into ${accountId}`,
    );
  }
  const existing = await tx.rewardGrant.findUnique({ where: { earnTransferId: input.earnTransferId } });
  if (existing) return { grant: toGrant(existing), created: false };
  const row = await tx.rewardGrant.create({
    data: {
      id: newId('rg'),
      issuerId: input.issuerId,
      chgId: input.chgId,
      merchantId: input.merchantId,
      accountId,
      earnTransferId: input.earnTransferId,
      sourceTransactionId: input.sourceTransactionId ?? null,
      amountMinor: BigInt(input.amountMinor),
      remainingMinor: BigInt(input.amountMinor),
      availableAt: input.availableAt,
      expiresAt: input.expiresAt,
      // Its first notice (reward_available) falls due when it becomes spendable.
      nextNoticeAt: input.availableAt,
      createdAt: input.at,
      updatedAt: input.at,
    },
  });
  return { grant: toGrant(row), created: true };
}

/** adjust: a customer-service debit, from any unexpired grant (spendable yet or not).
 *  reverse_credit: a refund taking back a claim's credit, from the grants that credit opened. */
export type DrawMode = 'spend' | 'clawback' | 'expire' | 'adjust' | 'reverse_credit';

export interface DrawInput {
  issuerId: string;
  chgId: string;
  merchantId: string;
  /** The most to draw; a draw takes less when the eligible grants hold less. */
  amountMinor: number;
  at: Date;
  mode: DrawMode;
  /** clawback, reverse_credit: the grants the refunded purchase (or its claim) created, in the order to draw them.
   *  expire: exactly one grant, which must have expired by `at`. */
  preferGrantIds?: readonly string[];
}

/**
 * Takes up to `amountMinor` out of the eligible grants and returns where it came from.
 * The rows are locked in id order (the same order for every mode, so draws cannot deadlock)
 * and read after the lock, so concurrent draws never take the same value twice.
 * The caller must post the matching transfer in the same transaction (see branded.ts).
 */
export async function drawFromGrants(tx: Tx, input: DrawInput): Promise<Allocation[]> {
  requirePositiveMinor(input.amountMinor);
  const candidates = (await lockCandidates(tx, input)).map(toGrant);
  for (const g of candidates)
    assert(
      g.chgId === input.chgId && g.merchantId === input.merchantId && g.issuerId === input.issuerId,
      `grant ${g.id} outside the draw`,
    );
  const ordered =
    input.mode === 'clawback' || input.mode === 'reverse_credit'
      ? [...candidates].sort((a, b) => input.preferGrantIds!.indexOf(a.id) - input.preferGrantIds!.indexOf(b.id))
      : [...candidates].sort(compareFifo);
  const allocations = allocateDraw(
    ordered.map((g) => ({ grantId: g.id, remainingMinor: g.remainingMinor })),
    input.amountMinor,
  );
  for (const a of allocations) {
    await tx.rewardGrant.update({
      where: { id: a.grantId },
      data: { remainingMinor: { decrement: BigInt(a.amountMinor) }, updatedAt: input.at },
    });
  }
  return allocations;
}

function lockCandidates(tx: Tx, input: DrawInput): Promise<RewardGrantRow[]> {
  const scope = Prisma.sql`issuer_id = ${input.issuerId} AND chg_id = ${input.chgId} AND merchant_id = ${input.merchantId} AND remaining_minor > 0`;
  let eligible: Prisma.Sql;
  if (input.mode === 'spend') {
    eligible = Prisma.sql`id IN (SELECT id FROM reward_grant WHERE ${scope} AND available_at <= ${input.at} AND expires_at > ${input.at}
      ORDER BY expires_at, created_at, id LIMIT ${MAX_GRANTS_PER_DRAW})`;
  } else if (input.mode === 'adjust') {
    eligible = Prisma.sql`id IN (SELECT id FROM reward_grant WHERE ${scope} AND expires_at > ${input.at}
      ORDER BY expires_at, created_at, id LIMIT ${MAX_GRANTS_PER_DRAW})`;
  } else {
    const ids = input.preferGrantIds ?? [];
    if (ids.length === 0 || ids.length > MAX_GRANTS_PER_DRAW || (input.mode === 'expire' && ids.length !== 1)) {
      throw new LedgerError(
        LEDGER_INVALID_INPUT,
        `${input.mode} needs ${input.mode === 'expire' ? 'exactly one grant id' : `1 to ${MAX_GRANTS_PER_DRAW} grant ids`} in preferGrantIds`,
      );
    }
    eligible = Prisma.sql`id IN (${Prisma.join(ids)})`;
    if (input.mode === 'expire') eligible = Prisma.sql`${eligible} AND expires_at <= ${input.at}`;
  }
  // FOR UPDATE re-checks the WHERE clause on the latest row version, so a grant emptied by a
  // concurrent draw while we waited for its lock drops out here.
  return tx.$queryRaw<RewardGrantRow[]>`
    SELECT id, issuer_id AS "issuerId", chg_id AS "chgId", merchant_id AS "merchantId", account_id AS "accountId",
           earn_transfer_id AS "earnTransferId", source_transaction_id AS "sourceTransactionId",
           amount_minor AS "amountMinor", remaining_minor AS "remainingMinor", available_at AS "availableAt",
           expires_at AS "expiresAt", created_at AS "createdAt", updated_at AS "updatedAt"
      FROM reward_grant WHERE ${scope} AND ${eligible} ORDER BY id FOR UPDATE`;
}

/** Grants past expiry that still hold value, oldest first: the expiry job's work list. */
export async function listExpiredGrants(
  tx: Tx,
  input: { at: Date; limit: number; issuerId?: string },
): Promise<Grant[]> {
  assert(Number.isSafeInteger(input.limit) && input.limit > 0 && input.limit <= 1000, 'limit must be 1..1000');
  const rows = await tx.rewardGrant.findMany({
    where: {
      expiresAt: { lte: input.at },
      remainingMinor: { gt: 0n },
      ...(input.issuerId ? { issuerId: input.issuerId } : {}),
    },
    orderBy: [{ expiresAt: 'asc' }, { id: 'asc' }],
    take: input.limit,
  });
  return rows.map(toGrant);
}
