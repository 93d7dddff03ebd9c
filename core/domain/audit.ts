// The operator audit log: who did what to which record, written in the same transaction as
// the change it describes. Shared by the API's operator routes and the customer-service
// postings of core/domain, which write their entries with their money.
//
// The log is the audit trail (decision 0058): append-only, each row chained to the one before by
// the database. A mutating operator call writes exactly one row of its own, carrying the call's
// context (roles, outcome, request id, address, user agent): the entry its handler writes with
// the change, when it writes one, or else the row the call's wrapper writes once it has ended
// (api/audit/operator-calls.ts). The wrapper's context reaches the handler's entry through
// operatorCall, so no store between them passes it along.
import { AsyncLocalStorage } from 'node:async_hooks';
import { newId } from '../ids';
import type { Db } from '../../prisma/client';
import type { Prisma } from '../../prisma/generated/client';

export interface AuditEntry {
  actor: string;
  action: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

/** A mutating operator call in progress: the id its one row takes, and what the row says of it. */
export interface OperatorCall {
  id: string;
  operatorId: string;
  roles: readonly string[];
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
  /** The handler wrote the call's row (in its transaction, which may yet roll back). */
  written: boolean;
  /** The approval this call carries out (four eyes): the change's entries name it and its maker. */
  approval?: { id: string; makerId: string };
}

export const operatorCall = new AsyncLocalStorage<OperatorCall>();

export async function recordAudit(db: Db | Prisma.TransactionClient, entry: AuditEntry, now: Date): Promise<void> {
  const call = operatorCall.getStore();
  const ownRow = call !== undefined && !call.written;
  if (ownRow) call.written = true;
  await db.operatorAuditLog.create({
    data: {
      id: ownRow ? call.id : newId('aud'),
      actor: entry.actor,
      action: entry.action,
      targetId: entry.targetId ?? null,
      details: {
        ...entry.details,
        ...(call?.approval ? { approvalId: call.approval.id, makerId: call.approval.makerId } : {}),
      } as Prisma.InputJsonValue,
      createdAt: now,
      ...(ownRow
        ? {
            operatorRoles: [...call.roles],
            outcome: 'done',
            requestId: call.requestId,
            ip: call.ip,
            userAgent: call.userAgent,
          }
        : {}),
    },
  });
}
