// An audit trail row as the operator API shows it (api/audit/schemas.ts, AuditLogEntry).
import type { OperatorAuditLog } from '../../prisma/generated/client';

export function presentAuditEntry(r: OperatorAuditLog) {
  return {
    id: r.id,
    seq: Number(r.seq),
    actor: r.actor,
    operatorRoles: r.outcome === null ? null : (r.operatorRoles ?? []),
    action: r.action,
    targetId: r.targetId,
    outcome: r.outcome,
    statusCode: r.statusCode,
    requestId: r.requestId,
    ip: r.ip,
    userAgent: r.userAgent,
    details: r.details,
    createdAt: r.createdAt.toISOString(),
    prevHash: r.prevHash,
    hash: r.hash,
  };
}
