// The operator audit log: who did what to which record, written in the same transaction as
// the change it describes. Shared by the API's operator routes and the customer-service
// postings of core/domain, which write their entries with their money.
import { newId } from '../ids';
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';

export interface AuditEntry {
  actor: string;
  action: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

export async function recordAudit(db: Db | Prisma.TransactionClient, entry: AuditEntry, now: Date): Promise<void> {
  await db.operatorAuditLog.create({
    data: {
      id: newId('aud'),
      actor: entry.actor,
      action: entry.action,
      targetId: entry.targetId ?? null,
      details: (entry.details ?? {}) as Prisma.InputJsonValue,
      createdAt: now,
    },
  });
}
