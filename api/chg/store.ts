// Persistence of cardholder groups. An upsert is one database transaction holding an
// advisory lock on (issuer, group externalId), so concurrent syncs of one group queue up
// instead of interleaving; syncs of different groups run in parallel and meet only at the
// partial unique indexes that keep an issuer's cardholder and card ids in one active group.
import { errors, ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import { classifyFailure } from '../../core/failures';
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';
import type { GroupInput } from './schemas';
import type { GroupRow } from './present';
import { deactivateGroupActivations } from '../activations/store';

type Tx = Prisma.TransactionClient;
type Status = 'active' | 'inactive';

const GROUP_INCLUDE = { cardholders: { include: { cards: true } } } as const;

export interface UpsertResult {
  created: boolean;
  group: GroupRow;
}

export async function upsertGroup(db: Db, issuerId: string, input: GroupInput, now: Date): Promise<UpsertResult> {
  try {
    return await db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`chg:${issuerId}:${input.externalId}`}, 0))`;
      const existing = await tx.cardholderGroup.findUnique({
        where: { issuerId_externalId: { issuerId, externalId: input.externalId } },
        include: GROUP_INCLUDE,
      });
      const groupId = existing?.id ?? newId('chg');
      await assertIdsFree(tx, issuerId, groupId, input);
      const groupActive = input.status === 'active';
      const lifecycle = {
        status: input.status,
        deactivatedAt: nextDeactivatedAt(existing, input.status, now),
        updatedAt: now,
      };
      if (existing) {
        await tx.cardholderGroup.update({
          where: { id: groupId },
          data: { ...lifecycle, settings: input.settings as Prisma.InputJsonValue, segments: [...input.segments] },
        });
      } else {
        await tx.cardholderGroup.create({
          data: {
            id: groupId,
            issuerId,
            externalId: input.externalId,
            settings: input.settings as Prisma.InputJsonValue,
            segments: [...input.segments],
            createdAt: now,
            ...lifecycle,
          },
        });
      }
      await syncCardholders(tx, { issuerId, groupId, groupActive, now }, existing, input);
      if (!groupActive) await deactivateGroupActivations(tx, issuerId, groupId, now);
      const group = await tx.cardholderGroup.findUniqueOrThrow({ where: { id: groupId }, include: GROUP_INCLUDE });
      return { created: !existing, group };
    });
  } catch (err) {
    // Two groups claiming one cardholder at the same instant: the partial unique index
    // decides, and the loser gets the same 409 the pre-check gives.
    if (!(err instanceof ApiError) && classifyFailure(err) === 'unique_violation') {
      throw errors.conflict(
        'external_id_conflict',
        'A cardholder or card id is already active in another group of this issuer.',
      );
    }
    throw err;
  }
}

/** 409 when a cardholder or card id of the body is active in another group of the issuer. */
async function assertIdsFree(tx: Tx, issuerId: string, groupId: string, input: GroupInput): Promise<void> {
  if (input.status !== 'active') return;
  const cardholderIds = input.cardholders.filter((c) => c.status === 'active').map((c) => c.externalId);
  const cardIds = input.cardholders
    .filter((c) => c.status === 'active')
    .flatMap((c) => c.cards.filter((k) => k.status === 'active').map((k) => k.externalId));
  // One after the other: a transaction is one connection.
  const cardholders = await tx.cardholder.findMany({
    where: { issuerId, status: 'active', chgId: { not: groupId }, externalId: { in: cardholderIds } },
    select: { externalId: true },
  });
  const cards = await tx.card.findMany({
    where: { issuerId, status: 'active', chgId: { not: groupId }, externalId: { in: cardIds } },
    select: { externalId: true },
  });
  if (cardholders.length > 0 || cards.length > 0) {
    throw errors.conflict(
      'external_id_conflict',
      'A cardholder or card id is already active in another group of this issuer.',
      {
        cardholderExternalIds: cardholders.map((c) => c.externalId),
        cardExternalIds: cards.map((c) => c.externalId),
      },
    );
  }
}

interface SyncContext {
  issuerId: string;
  groupId: string;
  groupActive: boolean;
  now: Date;
}

/**
 * Sync semantics: the body is the desired state. Rows missing from it are deactivated
 * first (so an id moving between cardholders never meets itself in the unique index),
 * then listed rows are updated or created in body order.
 */
async function syncCardholders(tx: Tx, sync: SyncContext, existing: GroupRow | null, input: GroupInput): Promise<void> {
  const { now } = sync;
  const stored = new Map((existing?.cardholders ?? []).map((c) => [c.externalId, c]));
  const listed = new Set(input.cardholders.map((c) => c.externalId));
  let position = input.cardholders.length;
  for (const cardholder of existing?.cardholders ?? []) {
    if (listed.has(cardholder.externalId)) {
      const listedCards = new Set(
        input.cardholders.find((c) => c.externalId === cardholder.externalId)!.cards.map((k) => k.externalId),
      );
      await deactivateCards(
        tx,
        cardholder.cards.filter((k) => !listedCards.has(k.externalId)),
        now,
      );
      continue;
    }
    await deactivateCards(tx, cardholder.cards, now);
    await tx.cardholder.update({
      where: { id: cardholder.id },
      data: {
        status: 'inactive',
        deactivatedAt: cardholder.deactivatedAt ?? now,
        position: position++,
        updatedAt: now,
      },
    });
  }
  for (const [i, body] of input.cardholders.entries()) {
    const status: Status = sync.groupActive ? body.status : 'inactive';
    const row = stored.get(body.externalId);
    const cardholderId = row?.id ?? newId('ch');
    if (row) {
      await tx.cardholder.update({
        where: { id: row.id },
        data: { status, position: i, deactivatedAt: nextDeactivatedAt(row, status, now), updatedAt: now },
      });
    } else {
      await tx.cardholder.create({
        data: {
          id: cardholderId,
          issuerId: sync.issuerId,
          chgId: sync.groupId,
          externalId: body.externalId,
          status,
          position: i,
          deactivatedAt: status === 'inactive' ? now : null,
          createdAt: now,
          updatedAt: now,
        },
      });
    }
    await syncCards(tx, sync, { id: cardholderId, status, cards: row?.cards ?? [] }, body.cards);
  }
}

async function syncCards(
  tx: Tx,
  sync: SyncContext,
  cardholder: { id: string; status: Status; cards: GroupRow['cardholders'][number]['cards'] },
  cards: GroupInput['cardholders'][number]['cards'],
): Promise<void> {
  const { now } = sync;
  const stored = new Map(cardholder.cards.map((k) => [k.externalId, k]));
  const creates: Prisma.CardCreateManyInput[] = [];
  for (const [j, body] of cards.entries()) {
    const status: Status = cardholder.status === 'active' ? body.status : 'inactive';
    const row = stored.get(body.externalId);
    if (row) {
      await tx.card.update({
        where: { id: row.id },
        data: {
          status,
          last4: body.last4,
          bin: body.bin ?? null,
          network: body.network,
          position: j,
          deactivatedAt: nextDeactivatedAt(row, status, now),
          updatedAt: now,
        },
      });
    } else {
      creates.push({
        id: newId('card'),
        issuerId: sync.issuerId,
        chgId: sync.groupId,
        cardholderId: cardholder.id,
        externalId: body.externalId,
        last4: body.last4,
        bin: body.bin ?? null,
        network: body.network,
        status,
        position: j,
        deactivatedAt: status === 'inactive' ? now : null,
        createdAt: now,
        updatedAt: now,
      });
    }
  }
  if (creates.length > 0) await tx.card.createMany({ data: creates });
}

async function deactivateCards(tx: Tx, cards: Array<{ id: string; status: string }>, now: Date): Promise<void> {
  const ids = cards.filter((k) => k.status === 'active').map((k) => k.id);
  if (ids.length === 0) return;
  await tx.card.updateMany({
    where: { id: { in: ids } },
    data: { status: 'inactive', deactivatedAt: now, updatedAt: now },
  });
}

function nextDeactivatedAt(
  row: { status: string; deactivatedAt: Date | null } | null,
  status: Status,
  now: Date,
): Date | null {
  if (status === 'active') return null;
  return row?.status === 'inactive' && row.deactivatedAt ? row.deactivatedAt : now;
}

export async function readGroup(db: Db | Tx, issuerId: string, chgId: string): Promise<GroupRow> {
  // Filtering on issuerId makes another issuer's group indistinguishable from a missing one.
  const group = await db.cardholderGroup.findFirst({ where: { id: chgId, issuerId }, include: GROUP_INCLUDE });
  if (!group) throw errors.notFound('chg_not_found', `No cardholder group ${chgId}.`);
  return group;
}

/** Soft deactivation of a group with everything in it; history stays readable. */
export async function deactivateGroup(db: Db, issuerId: string, chgId: string, now: Date): Promise<GroupRow> {
  return db.$transaction(async (tx) => {
    await readGroup(tx, issuerId, chgId);
    const inactive = { status: 'inactive', deactivatedAt: now, updatedAt: now };
    await tx.card.updateMany({ where: { chgId, issuerId, status: 'active' }, data: inactive });
    await tx.cardholder.updateMany({ where: { chgId, issuerId, status: 'active' }, data: inactive });
    await tx.cardholderGroup.updateMany({ where: { id: chgId, issuerId, status: 'active' }, data: inactive });
    await deactivateGroupActivations(tx, issuerId, chgId, now);
    return readGroup(tx, issuerId, chgId);
  });
}

export async function deactivateCardholder(
  db: Db,
  issuerId: string,
  chgId: string,
  cardholderId: string,
  now: Date,
): Promise<GroupRow> {
  return db.$transaction(async (tx) => {
    await readGroup(tx, issuerId, chgId);
    const cardholder = await tx.cardholder.findFirst({ where: { id: cardholderId, chgId, issuerId } });
    if (!cardholder) throw errors.notFound('cardholder_not_found', `No cardholder ${cardholderId} in group ${chgId}.`);
    const inactive = { status: 'inactive', deactivatedAt: now, updatedAt: now };
    await tx.card.updateMany({ where: { cardholderId, status: 'active' }, data: inactive });
    await tx.cardholder.updateMany({ where: { id: cardholderId, status: 'active' }, data: inactive });
    return readGroup(tx, issuerId, chgId);
  });
}

export async function deactivateCard(
  db: Db,
  issuerId: string,
  chgId: string,
  cardholderId: string,
  cardId: string,
  now: Date,
): Promise<GroupRow> {
  return db.$transaction(async (tx) => {
    await readGroup(tx, issuerId, chgId);
    const card = await tx.card.findFirst({ where: { id: cardId, cardholderId, chgId, issuerId } });
    if (!card)
      throw errors.notFound('card_not_found', `No card ${cardId} for cardholder ${cardholderId} in group ${chgId}.`);
    await tx.card.updateMany({
      where: { id: cardId, status: 'active' },
      data: { status: 'inactive', deactivatedAt: now, updatedAt: now },
    });
    return readGroup(tx, issuerId, chgId);
  });
}
