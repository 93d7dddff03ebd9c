// Every mutating operator call leaves exactly one row in the audit trail, whatever its outcome
// (API.md, "Operators with names"; decision 0058): refused by role, invalid, in conflict, failed
// or done. A handler that changes something writes the call's row itself, with what changed, in
// the transaction of the change (core/domain/audit.ts, recordAudit, which finds the call here);
// for every other ending this writes it once the call has ended. The row's id is chosen before
// the call runs, so "once" is the database's to keep: the closing insert adds the row only when
// no row has that id, which also covers a handler whose transaction rolled back.
import type { Context } from 'koa';
import { ApiError } from '../../core/errors';
import { newId } from '../../core/ids';
import { operatorCall, type OperatorCall } from '../../core/domain/audit';
import type { Db } from '../../prisma/client';
import type { Clock } from '../deps';
import type { AuthenticatedOperator } from '../operators/roles';
import { REPLAYED_HEADER } from '../middleware/idempotency';

export const AUDIT_OUTCOMES = ['done', 'denied', 'failed', 'pending'] as const;
export type Outcome = (typeof AUDIT_OUTCOMES)[number];

/** What the trail calls a mutating operator route's action, and the path parameter it acts on. */
export interface AuditedAction {
  action: string;
  targetParam?: string;
}

export type AuditCall = (ctx: Context, audited: AuditedAction, run: () => Promise<void>) => Promise<void>;

/** 403 is the role's refusal; any other error status, a failure; a call held for its approval, pending. */
export function outcomeOf(status: number, held = false): Outcome {
  if (status === 403) return 'denied';
  if (status >= 400) return 'failed';
  if (held) return 'pending';
  return 'done';
}

export function createAuditCall(db: Db, clock: Clock): AuditCall {
  return async (ctx, audited, run) => {
    const operator = ctx.state.operator as AuthenticatedOperator;
    const call: OperatorCall = {
      id: newId('aud'),
      operatorId: operator.id,
      roles: operator.roles,
      requestId: (ctx.state.requestId as string | undefined) ?? null,
      ip: ctx.ip || null,
      userAgent: ctx.get('user-agent') || null,
      written: false,
    };
    const targetId = audited.targetParam ? (ctx.params?.[audited.targetParam] ?? null) : null;
    try {
      await operatorCall.run(call, run);
    } catch (err) {
      const status = err instanceof ApiError ? err.status : 500;
      // The answer's reasonCode and details (what a refusal lacked, which fields were invalid),
      // which name fields and never echo a value.
      const details =
        err instanceof ApiError
          ? { error: err.reasonCode ?? err.errorName, ...err.details }
          : { error: 'internal_error' };
      await closeCall(db, call, { ...audited, targetId, status, details }, clock.now());
      throw err;
    }
    // A refusal kept under an Idempotency-Key is answered again without an error thrown: its
    // body says what it was.
    const answered =
      ctx.status >= 400 ? (ctx.body as { reasonCode?: string; name?: string; details?: object }) : undefined;
    const replayed = ctx.response.get(REPLAYED_HEADER) === 'true' ? { replayed: true } : {};
    // Held for a second operator (api/approvals/gate.ts): the row names the approval.
    const held = ctx.status === 202 ? (ctx.body as { approvalId?: string; reason?: string }) : undefined;
    const approval = held?.approvalId ? { approvalId: held.approvalId, reason: held.reason } : undefined;
    const details = answered
      ? { error: answered.reasonCode ?? answered.name, ...answered.details, ...replayed }
      : { ...approval, ...replayed };
    await closeCall(
      db,
      call,
      { ...audited, targetId, status: ctx.status, held: approval !== undefined, details },
      clock.now(),
    );
  };
}

interface Ending {
  action: string;
  targetId: string | null;
  status: number;
  held?: boolean;
  details: Record<string, unknown>;
}

async function closeCall(db: Db, call: OperatorCall, end: Ending, now: Date): Promise<void> {
  // INSERT ... SELECT ... WHERE NOT EXISTS, not ON CONFLICT: the chain's trigger runs before a
  // conflict is found, and a row that then was not inserted would have moved the chain's head.
  await db.$executeRaw`
    INSERT INTO operator_audit_log (id, actor, action, target_id, details, created_at, operator_roles,
                                    outcome, status_code, request_id, ip, user_agent)
    SELECT ${call.id}, ${call.operatorId}, ${end.action}, ${end.targetId}, ${JSON.stringify(end.details)}::jsonb,
           ${now}, ${[...call.roles]}::text[], ${outcomeOf(end.status, end.held)}, ${end.status}, ${call.requestId},
           ${call.ip}, ${call.userAgent}
     WHERE NOT EXISTS (SELECT 1 FROM operator_audit_log WHERE id = ${call.id})`;
}
