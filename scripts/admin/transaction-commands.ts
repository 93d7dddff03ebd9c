// Admin CLI commands for transactions (settlements `txn_` and authorizations `auth_`):
// reprocess one that ended unknown (same function as the operator API, audited alike) and
// show its stored state.
import { isId } from '../../core/ids';
import { reprocessTransaction } from '../../api/operations/reprocess';
import { required, UsageError, type Command } from './command';

const EVENT_PREFIXES = ['txn', 'auth'] as const;

function eventId(value: string): string {
  if (!isId(EVENT_PREFIXES, value)) throw new UsageError(`${value} is not a txn_ or auth_ id`);
  return value;
}

export const transactionCommands: Command[] = [
  {
    name: 'transaction:reprocess',
    usage: 'transaction:reprocess <txnId|authId> [--reason <text>]',
    summary: 'Re-run the processing of a settlement or authorization that ended unknown',
    async run(args, ctx) {
      const id = eventId(required(args, 0, 'txnId|authId')); // before connecting: a typo fails at once
      ctx.print(await reprocessTransaction(ctx.db, await ctx.temporal(), id, ctx.actor, ctx.now, args.flags.reason));
    },
  },
  {
    name: 'transaction:show',
    usage: 'transaction:show <txnId|authId>',
    summary: 'Show a transaction: status, failure reason, workflow id, match trace',
    async run(args, ctx) {
      const id = eventId(required(args, 0, 'txnId|authId'));
      const event = await ctx.db.ingestedEvent.findUnique({ where: { id } });
      if (!event) throw new UsageError(`no transaction ${id}`);
      const { payload: _payload, amountMinor, ...rest } = event;
      ctx.print({ ...rest, amountMinor: Number(amountMinor) });
    },
  },
];
