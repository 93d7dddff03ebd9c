// The operator audit log's writer lives in core/domain/audit.ts, shared with the customer-service
// postings that write their entries beside their money; the operator routes use it from here,
// and read the trail with the filters and the export below.
import type { Db } from '../../prisma/client';
import type { OperatorAuditLog, Prisma } from '../../prisma/generated/client';
import { errors } from '../../core/errors';

export { recordAudit, type AuditEntry } from '../../core/domain/audit';

/** Rows an NDJSON export reads at a time. */
const EXPORT_PAGE_ROWS = 1_000;

interface AuditFilter {
  actor?: string;
  action?: string;
  targetId?: string;
  outcome?: string;
  from?: string;
  to?: string;
}

export function auditWhere(q: AuditFilter): Prisma.OperatorAuditLogWhereInput {
  if (q.from && q.to && new Date(q.from) >= new Date(q.to))
    throw errors.validation('invalid_query', 'from must be before to.', [
      { path: '/from', message: 'is not before to' },
    ]);
  return {
    ...(q.actor === undefined ? {} : { actor: q.actor }),
    ...(q.action === undefined ? {} : { action: q.action }),
    ...(q.targetId === undefined ? {} : { targetId: q.targetId }),
    ...(q.outcome === undefined ? {} : { outcome: q.outcome }),
    ...(q.from || q.to
      ? { createdAt: { ...(q.from ? { gte: new Date(q.from) } : {}), ...(q.to ? { lt: new Date(q.to) } : {}) } }
      : {}),
  };
}

/** Every matching row in the chain's order, a page at a time as the response drains. */
export async function* exportLines(
  db: Db,
  where: Prisma.OperatorAuditLogWhereInput,
  present: (row: OperatorAuditLog) => unknown,
): AsyncGenerator<string> {
  let after = 0n;
  for (;;) {
    const rows = await db.operatorAuditLog.findMany({
      where: { AND: [where, { seq: { gt: after } }] },
      orderBy: { seq: 'asc' },
      take: EXPORT_PAGE_ROWS,
    });
    for (const row of rows) yield `${JSON.stringify(present(row))}\n`;
    if (rows.length < EXPORT_PAGE_ROWS) return;
    after = rows[rows.length - 1].seq;
  }
}
