// Approvals (four eyes): the call recorded by its maker, then decided once by another operator.
// Deciding locks the row, so of two operators deciding at once one decides and the other is
// told it is no longer pending; the database refuses a checker who is the maker
// (approval_checker_not_maker_check) should a path here ever miss it.
import type { Approval, Prisma } from '../../prisma/generated/client';
import type { Db } from '../../prisma/client';
import { errors } from '../../core/errors';
import { newId } from '../../core/ids';
import { recordAudit } from '../audit/store';
import type { AuthenticatedOperator } from '../operators/roles';
import type { FourEyesReason } from '../../core/rules/four-eyes';

/** What the call would do, as the maker sent it (after validation), and the key it came with. */
export interface HeldRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
  idempotencyKey: string | null;
}

export interface NewApproval {
  action: string;
  operationId: string;
  requiredRole: string;
  targetId: string | null;
  reason: FourEyesReason;
  request: HeldRequest;
  makerId: string;
}

/** An approval left `approving` this long (its carrier died) may be carried out again: every held call is idempotent. */
const STALLED_MS = 60_000;

export async function createApproval(db: Db, input: NewApproval, now: Date): Promise<Approval> {
  return db.approval.create({
    data: { id: newId('apr'), ...input, request: input.request as unknown as Prisma.InputJsonValue, createdAt: now },
  });
}

export async function findApproval(db: Db, approvalId: string): Promise<Approval> {
  const approval = await db.approval.findUnique({ where: { id: approvalId } });
  if (!approval) throw errors.notFound('approval_not_found', `No approval ${approvalId}.`);
  return approval;
}

/**
 * The checker takes the approval: it is theirs to carry out from here. Pending, or approving and
 * stalled; never the maker's own; only with the role its call needs.
 */
export async function takeApproval(
  db: Db,
  approvalId: string,
  checker: AuthenticatedOperator,
  decision: 'approve' | 'reject',
  now: Date,
): Promise<Approval> {
  return db.$transaction(async (tx) => {
    const [row] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM approval WHERE id = ${approvalId} FOR UPDATE`;
    if (!row) throw errors.notFound('approval_not_found', `No approval ${approvalId}.`);
    const approval = await tx.approval.findUniqueOrThrow({ where: { id: approvalId } });
    const stalled =
      decision === 'approve' &&
      approval.status === 'approving' &&
      approval.checkerId === checker.id &&
      approval.decidedAt !== null &&
      now.getTime() - approval.decidedAt.getTime() > STALLED_MS;
    if (approval.status !== 'pending' && !stalled)
      throw errors.conflict(
        'approval_not_pending',
        `Approval ${approvalId} is ${approval.status}: it was decided already.`,
        {
          status: approval.status,
        },
      );
    if (approval.makerId === checker.id)
      throw errors.conflict('same_operator', 'A second operator must decide this: the one who asked cannot.', {
        makerId: approval.makerId,
      });
    if (!checker.roles.includes(approval.requiredRole as AuthenticatedOperator['roles'][number]))
      throw errors.forbiddenRole(approval.requiredRole, checker.roles);
    const taken = await tx.approval.update({
      where: { id: approvalId },
      data: {
        status: decision === 'approve' ? 'approving' : 'rejected',
        checkerId: checker.id,
        decidedAt: now,
        ...(decision === 'reject' ? { completedAt: now } : {}),
      },
    });
    await recordAudit(
      tx,
      {
        actor: checker.id,
        action: decision === 'approve' ? 'approval.approve' : 'approval.reject',
        targetId: approvalId,
        details: {
          operationId: approval.operationId,
          reason: approval.reason,
          makerId: approval.makerId,
          targetId: approval.targetId,
        },
      },
      now,
    );
    return taken;
  });
}

/** The carried-out call's answer: approved, or failed with its error. */
export async function completeApproval(
  db: Db,
  approvalId: string,
  outcome: { status: 'approved' | 'failed'; statusCode: number; body: unknown },
  now: Date,
): Promise<Approval> {
  return db.approval.update({
    where: { id: approvalId },
    data: {
      status: outcome.status,
      result: { statusCode: outcome.statusCode, body: outcome.body ?? null } as Prisma.InputJsonValue,
      completedAt: now,
    },
  });
}

export async function listApprovals(
  db: Db,
  q: {
    status?: string;
    keyset: { where: Prisma.ApprovalWhereInput; orderBy: Prisma.ApprovalOrderByWithRelationInput[] };
    take: number;
  },
): Promise<Approval[]> {
  return db.approval.findMany({
    where: { AND: [q.status ? { status: q.status } : {}, q.keyset.where] },
    orderBy: q.keyset.orderBy,
    take: q.take,
  });
}
