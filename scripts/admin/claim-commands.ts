// Admin CLI commands for claims in review: the queue, one claim with its evidence, and the
// operator's decision, handed to the claim's workflow exactly as the operator API hands it.
import { isId } from '../../core/ids';
import { OPERATOR_REJECTIONS } from '../../core/rules/claims';
import { BALANCE_TYPES, type BalanceType } from '../../core/rules/adjustments';
import {
  claimApprovalHold,
  decideClaimAsOperator,
  findClaimAsOperator,
  listClaimsAsOperator,
} from '../../api/claims/store';
import { holdForApproval } from './approval-commands';
import { presentClaimForOperator } from '../../api/claims/present';
import { DEFAULT_PAGE_LIMIT } from '../../api/pagination';
import { required, UsageError, type Command } from './command';

function claimId(value: string): string {
  if (!isId('clm', value)) throw new UsageError(`${value} is not a clm_ id`);
  return value;
}

function amount(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError(`--amount must be a positive integer of minor units`);
  return n;
}

export const claimCommands: Command[] = [
  {
    name: 'claim:queue',
    usage: 'claim:queue [--issuer <issuerId>]',
    summary: 'Claims waiting for review, oldest first',
    async run(args, ctx) {
      const page = await listClaimsAsOperator(ctx.db, {
        status: 'needs_review',
        limit: DEFAULT_PAGE_LIMIT,
        ...(args.flags.issuer ? { issuerId: args.flags.issuer } : {}),
      });
      ctx.print(page.data.map(presentClaimForOperator));
    },
  },
  {
    name: 'claim:show',
    usage: 'claim:show <claimId>',
    summary: 'Show a claim with its evidence and computed reward',
    async run(args, ctx) {
      ctx.print(presentClaimForOperator(await findClaimAsOperator(ctx.db, claimId(required(args, 0, 'claimId')))));
    },
  },
  {
    name: 'claim:approve',
    usage:
      'claim:approve <claimId> [--amount <minor> [--balance cashback|branded]] [--learn-descriptor yes] [--note <text>]',
    summary: 'Approve a claim in review: post its missing_reward adjustment (optionally learn the descriptor)',
    async run(args, ctx) {
      const id = claimId(required(args, 0, 'claimId'));
      const balance = args.flags.balance;
      if (balance !== undefined && !(BALANCE_TYPES as readonly string[]).includes(balance))
        throw new UsageError('--balance is cashback or branded');
      const choice = {
        ...(amount(args.flags.amount) !== undefined ? { amountMinor: amount(args.flags.amount) } : {}),
        ...(balance ? { balanceType: balance as BalanceType } : {}),
        learnDescriptor: args.flags['learn-descriptor'] === 'yes',
        ...(args.flags.note ? { note: args.flags.note } : {}),
      };
      // Above the issuer's approvalThresholdMinor, a second person approves it (approval:approve).
      const reason = await claimApprovalHold(ctx.db, id, choice.amountMinor);
      if (reason)
        return holdForApproval(ctx, { operationId: 'approveClaim', reason, params: { claimId: id }, body: choice });
      const claim = await decideClaimAsOperator(ctx.db, await ctx.temporal(), id, {
        decision: 'approve',
        actor: ctx.actor,
        ...choice,
      });
      ctx.print(presentClaimForOperator(claim));
    },
  },
  {
    name: 'claim:reject',
    usage: `claim:reject <claimId> <${OPERATOR_REJECTIONS.join('|')}> [--note <text>]`,
    summary: 'Reject a claim in review with a reason',
    async run(args, ctx) {
      const id = claimId(required(args, 0, 'claimId'));
      const reasonCode = required(args, 1, 'reasonCode');
      if (!(OPERATOR_REJECTIONS as readonly string[]).includes(reasonCode))
        throw new UsageError(`reasonCode is one of ${OPERATOR_REJECTIONS.join(', ')}`);
      const claim = await decideClaimAsOperator(ctx.db, await ctx.temporal(), id, {
        decision: 'reject',
        actor: ctx.actor,
        reasonCode,
        ...(args.flags.note ? { note: args.flags.note } : {}),
      });
      ctx.print(presentClaimForOperator(claim));
    },
  },
];
