// Admin CLI commands for issuers, tokens and the audit log. They call the same functions
// as the operator API, so both paths validate and audit alike.
import { createIssuer, createToken, getIssuer, revokeToken, updateIssuer } from '../../api/issuers/store';
import { isId } from '../../core/ids';
import { intFlag, required, UsageError, type Command } from './command';
import { presentIssuer, presentToken } from '../../api/issuers/present';

function issuerId(value: string): string {
  if (!isId('iss', value)) throw new UsageError(`${value} is not an iss_ id`);
  return value;
}

export const issuerCommands: Command[] = [
  {
    name: 'issuer:create',
    usage: 'issuer:create --name <name> --environment sandbox|production [--delay-days N]',
    summary: 'Create an issuer',
    async run(args, ctx) {
      const environment = args.flags.environment;
      if (!args.flags.name) throw new UsageError('--name is required');
      if (environment !== 'sandbox' && environment !== 'production')
        throw new UsageError('--environment must be sandbox or production');
      const delay = intFlag(args, 'delay-days');
      if (delay !== undefined && (delay < 0 || delay > 365)) throw new UsageError('--delay-days must be 0..365');
      ctx.print(
        presentIssuer(
          await createIssuer(
            ctx.db,
            { name: args.flags.name, environment, brandedAvailabilityDelayDays: delay },
            ctx.actor,
            ctx.now,
          ),
        ),
      );
    },
  },
  {
    name: 'issuer:show',
    usage: 'issuer:show <issuerId>',
    summary: 'Show an issuer',
    async run(args, ctx) {
      ctx.print(presentIssuer(await getIssuer(ctx.db, issuerId(required(args, 0, 'issuerId')))));
    },
  },
  {
    name: 'issuer:update',
    usage: 'issuer:update <issuerId> [--name <name>] [--delay-days N]',
    summary: 'Rename an issuer or change its branded availability delay',
    async run(args, ctx) {
      const changes: { name?: string; brandedAvailabilityDelayDays?: number } = {};
      if (args.flags.name) changes.name = args.flags.name;
      const delay = intFlag(args, 'delay-days');
      if (delay !== undefined) changes.brandedAvailabilityDelayDays = delay;
      if (Object.keys(changes).length === 0) throw new UsageError('nothing to change');
      ctx.print(
        presentIssuer(await updateIssuer(ctx.db, issuerId(required(args, 0, 'issuerId')), changes, ctx.actor, ctx.now)),
      );
    },
  },
  {
    name: 'token:create',
    usage: 'token:create <issuerId> [--label <label>]',
    summary: 'Create an API token (the secret is printed once)',
    async run(args, ctx) {
      const { token, secret } = await createToken(
        ctx.db,
        issuerId(required(args, 0, 'issuerId')),
        args.flags.label,
        ctx.actor,
        ctx.now,
      );
      ctx.print(presentToken(token, secret));
    },
  },
  {
    name: 'token:revoke',
    usage: 'token:revoke <issuerId> <tokenId>',
    summary: 'Revoke an API token at once',
    async run(args, ctx) {
      await revokeToken(
        ctx.db,
        issuerId(required(args, 0, 'issuerId')),
        required(args, 1, 'tokenId'),
        ctx.actor,
        ctx.now,
      );
      ctx.print({ revoked: args.positionals[1] });
    },
  },
  {
    name: 'audit-log',
    usage: 'audit-log [--limit N]',
    summary: 'Show the newest operator audit entries',
    async run(args, ctx) {
      const take = Math.min(Math.max(intFlag(args, 'limit') ?? 20, 1), 200);
      ctx.print(await ctx.db.operatorAuditLog.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take }));
    },
  },
];
