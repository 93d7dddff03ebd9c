// An approval as the operator API shows it (api/approvals/schemas.ts).
import type { Approval } from '../../prisma/generated/client';

export function presentApproval(a: Approval) {
  const request = a.request as { params?: unknown; body?: unknown };
  return {
    approvalId: a.id,
    status: a.status,
    action: a.action,
    operationId: a.operationId,
    requiredRole: a.requiredRole,
    targetId: a.targetId,
    reason: a.reason,
    // The key the maker sent stays ours: it is theirs to replay with.
    request: { params: request.params ?? {}, body: request.body ?? null },
    makerId: a.makerId,
    checkerId: a.checkerId,
    result: a.result,
    createdAt: a.createdAt.toISOString(),
    decidedAt: a.decidedAt ? a.decidedAt.toISOString() : null,
  };
}
