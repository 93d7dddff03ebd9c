// Payouts for the routes: a run's row and its workflow, a single group's payout posted at once,
// and reading them. The paying is core/domain/payouts.ts's (and the run's workflow's).
import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { errors } from '../../core/errors';
import { newId } from '../../core/ids';
import { accounts } from '../../core/ledger';
import { classifyFailure } from '../../core/failures';
import { payGroups } from '../../core/domain/payouts';
import { startPayoutRunWorkflow } from '../../core/domain/run-starts';
import { lockIdempotencyKey } from '../../core/domain/ledger/tx';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { Db } from '../../prisma/client';
import type { Payout } from '../../prisma/generated/client';
import { sqlTransaction, type SqlTx } from '../../prisma/sql-transaction';
import { createdAtKey, createdAtKeyset, toPage } from '../pagination';
import { requireGroup } from '../catalogue/scope';
import type { GroupPayoutInput, PayoutListQuery, PayoutRunInput } from './schemas';

interface Caller {
  issuerId: string;
  idempotencyKey: string;
  /** The issuer's clock now. */
  at: Date;
}

const hashOf = (...parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');

const engineMissing = () =>
  errors.unavailable('workflow_engine_unavailable', 'The workflow engine is not configured; start the payout later.');

/**
 * Writes the run's payout row, then starts its workflow. The same Idempotency-Key answers the
 * payout it created (and starts its workflow if a crash left it unstarted); another key while a
 * run is processing is 409 payout_in_progress.
 */
export async function createPayoutRun(
  db: Db,
  temporal: WorkflowEngine | undefined,
  caller: Caller,
  input: PayoutRunInput,
): Promise<{ payout: Payout; created: boolean }> {
  if (!temporal) throw engineMissing();
  if (input.chgIds) await requireGroups(db, caller.issuerId, input.chgIds);
  const minimumMinor = input.minimumMinor ?? 1;
  const requestHash = hashOf('run', minimumMinor, input.chgIds ?? null, input.description ?? null);
  const { payout, created } = await db.$transaction(async (tx) => {
    await lockIdempotencyKey(tx, `payout:${caller.issuerId}:${caller.idempotencyKey}`);
    const previous = await findByKeyRaw(tx, caller, requestHash);
    if (previous) return { payout: previous, created: false };
    // One run at a time per issuer: creations queue here, so the check below sees every other.
    await lockIdempotencyKey(tx, `payout-run:${caller.issuerId}`);
    const running = await tx.payout.findFirst({
      where: { issuerId: caller.issuerId, kind: 'run', status: 'processing' },
      select: { id: true },
    });
    if (running) throw inProgress(running.id);
    const row = await tx.payout.create({
      data: {
        id: newId('po'),
        issuerId: caller.issuerId,
        kind: 'run',
        status: 'processing',
        idempotencyKey: caller.idempotencyKey,
        requestHash,
        minimumMinor: BigInt(minimumMinor),
        chgIds: input.chgIds ?? [],
        description: input.description ?? null,
        asOf: caller.at,
        createdAt: caller.at,
        updatedAt: caller.at,
      },
    });
    return { payout: row, created: true };
  });
  if (payout.status === 'processing') await startRun(db, temporal, payout, created);
  return { payout, created };
}

async function startRun(db: Db, temporal: WorkflowEngine, payout: Payout, created: boolean): Promise<void> {
  try {
    await startPayoutRunWorkflow(temporal, payout);
  } catch (err) {
    // A replayed request whose run is under way, or one the worker's watch started: nothing to start.
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    // Not started and nothing paid: the payout is withdrawn, so the issuer may ask again.
    if (created) await db.payout.deleteMany({ where: { id: payout.id, status: 'processing', groupCount: 0 } });
    if (classifyFailure(err) === 'workflow_engine_unavailable')
      throw errors.unavailable(
        'workflow_engine_unavailable',
        'The workflow engine is unreachable; start the payout later.',
      );
    throw err;
  }
}

/**
 * Pays one group now, in one transaction: all of its payable cashback, or `amountMinor` of it
 * (409 insufficient_balance beyond what is payable, nothing posted).
 */
export async function payGroupNow(
  db: Db,
  caller: Caller,
  chgId: string,
  input: GroupPayoutInput,
): Promise<{ payout: Payout; created: boolean }> {
  await requireGroup(db, caller.issuerId, chgId);
  const requestHash = hashOf('group', chgId, input.amountMinor ?? null, input.description ?? null);
  return sqlTransaction(db, async (tx) => {
    await lockIdempotencyKey(tx, `payout:${caller.issuerId}:${caller.idempotencyKey}`);
    const previous = await findByKeyRaw(tx, caller, requestHash);
    if (previous) return { payout: previous, created: false };
    const id = newId('po');
    await tx.$executeRaw`
      INSERT INTO payout (id, issuer_id, kind, status, idempotency_key, request_hash, minimum_minor, chg_ids, description, as_of, created_at, updated_at)
      VALUES (${id}, ${caller.issuerId}, 'group', 'processing', ${caller.idempotencyKey}, ${requestHash}, 1, ${[chgId]}::text[],
              ${input.description ?? null}, ${caller.at}, ${caller.at}, ${caller.at})`;
    const paid = await payGroups(tx, {
      issuerId: caller.issuerId,
      payoutId: id,
      asOf: caller.at,
      at: caller.at,
      minimumMinor: 1,
      accountIds: [accounts.chgCashback(caller.issuerId, chgId).id],
      amountMinor: input.amountMinor,
    });
    if (paid.length === 0)
      throw errors.conflict('insufficient_balance', 'The group has no payable cashback.', {
        balanceType: 'cashback',
        merchantId: null,
        availableMinor: 0,
      });
    await tx.$executeRaw`
      UPDATE payout SET status = 'completed', completed_at = ${caller.at} WHERE id = ${id}`;
    return { payout: (await findByKeyRaw(tx, caller, requestHash))!, created: true };
  });
}

type Reader = Pick<SqlTx, '$queryRaw'>;

/** The payout made under this key: the same request answers it, another is 409 idempotency_key_reused. */
async function findByKeyRaw(tx: Reader, caller: Caller, requestHash: string): Promise<Payout | undefined> {
  const [row] = await tx.$queryRaw<Payout[]>`
    SELECT id, issuer_id AS "issuerId", kind, status, idempotency_key AS "idempotencyKey", request_hash AS "requestHash",
           minimum_minor AS "minimumMinor", chg_ids AS "chgIds", description, as_of AS "asOf", group_count AS "groupCount",
           total_minor AS "totalMinor", failure_reason AS "failureReason", created_at AS "createdAt",
           updated_at AS "updatedAt", completed_at AS "completedAt"
      FROM payout WHERE issuer_id = ${caller.issuerId} AND idempotency_key = ${caller.idempotencyKey}`;
  if (row && row.requestHash !== requestHash) throw errors.idempotencyKeyReused({ payoutId: row.id });
  return row;
}

function inProgress(payoutId: string) {
  return errors.conflict(
    'payout_in_progress',
    `Payout run ${payoutId} is still processing; one run at a time per issuer.`,
    { payoutId },
  );
}

/** Every listed group must be the issuer's; those that are not are named, as missing ones would be. */
async function requireGroups(db: Db, issuerId: string, chgIds: string[]): Promise<void> {
  const found = await db.cardholderGroup.findMany({
    where: { issuerId, id: { in: chgIds } },
    select: { id: true },
  });
  const known = new Set(found.map((g) => g.id));
  const missing = chgIds.filter((id) => !known.has(id));
  if (missing.length > 0)
    throw errors.notFound(
      'chg_not_found',
      `No cardholder group ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}.`,
    );
}

export async function findPayout(db: Db, issuerId: string, payoutId: string): Promise<Payout> {
  const payout = await db.payout.findFirst({ where: { id: payoutId, issuerId } });
  if (!payout) throw errors.notFound('payout_not_found', `No payout ${payoutId}.`);
  return payout;
}

/** Newest first. */
export async function listPayouts(db: Db, issuerId: string, query: PayoutListQuery) {
  const keyset = createdAtKeyset(query.cursor, 'desc');
  const rows = await db.payout.findMany({
    where: { issuerId, ...keyset.where },
    orderBy: keyset.orderBy,
    take: query.limit + 1,
  });
  return toPage(rows, query.limit, createdAtKey);
}
