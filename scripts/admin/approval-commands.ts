// Admin CLI commands for four eyes (API.md, "Operators with names"): the queue of held calls and
// the second person's decision, with the same rules and records as the operator API
// (api/approvals/). Someone at the shell holds every role; they are still not their own second
// pair of eyes: a held call made as cli:<user> is decided by another user or operator.
import {
  createApproval,
  completeApproval,
  findApproval,
  listApprovals,
  takeApproval,
  type HeldRequest,
} from '../../api/approvals/store';
import { presentApproval } from '../../api/approvals/present';
import { payStatement } from '../../api/statements/store';
import { presentStatementPayment } from '../../api/statements/present';
import { decideClaimAsOperator } from '../../api/claims/store';
import { presentClaimForOperator } from '../../api/claims/present';
import { createOperator } from '../../api/operators/store';
import { presentOperatorWithToken } from '../../api/operators/present';
import { OPERATOR_ROLES } from '../../api/operators/roles';
import { ApiError } from '../../core/errors';
import { isId } from '../../core/ids';
import { DEFAULT_PAGE_LIMIT } from '../../api/pagination';
import { ROUTE_ACTIONS } from '../../api/audit/route-actions';
import { ROUTE_ROLES } from '../../api/operators/route-roles';
import type { FourEyesReason } from '../../core/rules/four-eyes';
import { required, UsageError, type Command, type CommandContext } from './command';

type Carrier = (held: HeldRequest, ctx: CommandContext) => Promise<{ statusCode: number; body: unknown }>;

/**
 * The held calls the CLI carries out, by the same functions their routes call. An offer's
 * budget and an operator's roles change through the operator API's approve, which runs the
 * route's own handler (an offer's change may start an enrolment run the CLI does not).
 */
const CARRIERS: Record<string, Carrier> = {
  async payStatement(held, ctx) {
    const body = held.body as { amountMinor: number; reference: string };
    const { payment, statement } = await payStatement(
      ctx.db,
      { actor: ctx.actor, idempotencyKey: held.idempotencyKey!, at: ctx.now },
      held.params.statementId,
      body,
    );
    return { statusCode: 201, body: presentStatementPayment(payment, statement) };
  },
  async approveClaim(held, ctx) {
    const body = held.body as Omit<Parameters<typeof decideClaimAsOperator>[3], 'decision' | 'actor'>;
    const claim = await decideClaimAsOperator(ctx.db, await ctx.temporal(), held.params.claimId, {
      ...body,
      decision: 'approve',
      actor: ctx.actor,
    });
    return { statusCode: 200, body: presentClaimForOperator(claim) };
  },
  async createOperator(held, ctx) {
    const { operator, secret } = await createOperator(
      ctx.db,
      held.body as Parameters<typeof createOperator>[1],
      ctx.actor,
      ctx.now,
    );
    return { statusCode: 201, body: presentOperatorWithToken(operator, secret) };
  },
};

/** A call the CLI holds for a second person, as the operator API would: the approval to decide. */
export async function holdForApproval(
  ctx: CommandContext,
  call: {
    operationId: string;
    reason: FourEyesReason;
    params: Record<string, string>;
    body: unknown;
    idempotencyKey?: string;
  },
): Promise<void> {
  const targets = Object.values(call.params);
  const approval = await createApproval(
    ctx.db,
    {
      action: ROUTE_ACTIONS[call.operationId],
      operationId: call.operationId,
      requiredRole: ROUTE_ROLES[call.operationId],
      targetId: targets.length > 0 ? targets[targets.length - 1] : null,
      reason: call.reason,
      request: { params: call.params, query: {}, body: call.body, idempotencyKey: call.idempotencyKey ?? null },
      makerId: ctx.actor,
    },
    ctx.now,
  );
  ctx.print({ approvalId: approval.id, status: 'pending', reason: call.reason, requiredRole: approval.requiredRole });
}

function approvalId(value: string): string {
  if (!isId('apr', value)) throw new UsageError(`${value} is not an apr_ id`);
  return value;
}

/** The shell's user, as a checker: every role, and their own name. */
const shellChecker = (ctx: CommandContext) => ({ id: ctx.actor, roles: [...OPERATOR_ROLES] });

export const approvalCommands: Command[] = [
  {
    name: 'approval:list',
    usage: 'approval:list [--status pending|approving|approved|failed|rejected] [--limit <n>]',
    summary: 'Held calls, oldest first (pending by default: the queue for a second person)',
    async run(args, ctx) {
      const take = Number(args.flags.limit ?? DEFAULT_PAGE_LIMIT);
      const rows = await listApprovals(ctx.db, {
        status: args.flags.status ?? 'pending',
        keyset: { where: {}, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
        take,
      });
      ctx.print(rows.map(presentApproval));
    },
  },
  {
    name: 'approval:approve',
    usage: 'approval:approve <approvalId>',
    summary: 'Approve a held call as the second person: it is carried out now, once',
    async run(args, ctx) {
      const id = approvalId(required(args, 0, 'approvalId'));
      const carrier = CARRIERS[(await findApproval(ctx.db, id)).operationId];
      if (!carrier)
        throw new UsageError(`${id} holds a call the CLI does not carry out: POST /admin/v1/approvals/${id}/approve`);
      const approval = await takeApproval(ctx.db, id, shellChecker(ctx), 'approve', ctx.now);
      let outcome: { status: 'approved' | 'failed'; statusCode: number; body: unknown };
      try {
        outcome = { status: 'approved', ...(await carrier(approval.request as unknown as HeldRequest, ctx)) };
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        outcome = { status: 'failed', statusCode: err.status, body: err.toBody() };
      }
      const { token: _shownOnce, ...kept } = (outcome.body ?? {}) as Record<string, unknown>;
      const done = await completeApproval(ctx.db, id, { ...outcome, body: kept }, new Date());
      ctx.print({ ...presentApproval(done), result: { statusCode: outcome.statusCode, body: outcome.body } });
    },
  },
  {
    name: 'approval:reject',
    usage: 'approval:reject <approvalId>',
    summary: 'Reject a held call as the second person: it is never carried out',
    async run(args, ctx) {
      const id = approvalId(required(args, 0, 'approvalId'));
      ctx.print(presentApproval(await takeApproval(ctx.db, id, shellChecker(ctx), 'reject', ctx.now)));
    },
  },
];
