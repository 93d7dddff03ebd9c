// Admin CLI commands for named operators. They call the same functions as the operator API, so
// both paths validate and audit alike. With shell and database access they are also the way back
// when root is switched off (OPERATOR_ROOT=disabled) and no admin can sign in.
import { createOperator, newAdminHold, rotateOperatorToken } from '../../api/operators/store';
import { presentOperatorWithToken } from '../../api/operators/present';
import { OPERATOR_ROLES, type OperatorRole } from '../../api/operators/roles';
import { isId } from '../../core/ids';
import { holdForApproval } from './approval-commands';
import { required, UsageError, type Command } from './command';

function roles(value: string | undefined): OperatorRole[] {
  const list = (value ?? '').split(',').filter((r) => r !== '');
  const unknown = list.filter((r) => !(OPERATOR_ROLES as readonly string[]).includes(r));
  if (list.length === 0 || unknown.length > 0 || new Set(list).size !== list.length)
    throw new UsageError(`--roles must list distinct roles of ${OPERATOR_ROLES.join(', ')}, comma-separated`);
  return list as OperatorRole[];
}

export const operatorCommands: Command[] = [
  {
    name: 'operator:create',
    usage: 'operator:create --name <name> --email <email> --roles <role,...>',
    summary: 'Name an operator with roles; prints their token once',
    async run(args, ctx) {
      const { name, email } = args.flags;
      if (!name || !email || !/^[^@\s]+@[^@\s]+$/.test(email))
        throw new UsageError('--name and an --email are required');
      const input = { name, email, roles: roles(args.flags.roles) };
      // A new admin waits for a second person while an active admin exists to be one; with none
      // (root switched off, the last admin gone) this is the way back in, and goes through.
      const reason = await newAdminHold(ctx.db, [], input.roles);
      if (reason) return holdForApproval(ctx, { operationId: 'createOperator', reason, params: {}, body: input });
      const { operator, secret } = await createOperator(ctx.db, input, ctx.actor, ctx.now);
      ctx.print(presentOperatorWithToken(operator, secret));
    },
  },
  {
    name: 'operator:rotate',
    usage: 'operator:rotate <operatorId>',
    summary: "Rotate an operator's token; prints the new one once, the old one is refused at once",
    async run(args, ctx) {
      const operatorId = required(args, 0, 'operatorId');
      if (!isId('op', operatorId)) throw new UsageError(`${operatorId} is not an op_ id`);
      const { operator, secret } = await rotateOperatorToken(ctx.db, operatorId, ctx.actor, ctx.now);
      ctx.print(presentOperatorWithToken(operator, secret));
    },
  },
];
