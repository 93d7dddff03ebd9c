// Admin CLI commands for transactions: reprocess one that ended unknown (same function as
// the operator API, audited alike) and show its stored state.
import { isId } from '../../core/ids';
import { reprocessTransaction } from '../../api/operations/reprocess';
import { required, UsageError, type Command } from './command';

function txnId(value: string): string {
  if (!isId('txn', value)) throw new UsageError(`${value} is not a txn_ id`);
  return value;
}

export const transactionCommands: Command[] = [
  {
    name: 'transaction:reprocess',
    usage: 'transaction:reprocess <txnId> [--reason <text>]',
    summary: 'Re-run the processing of a transaction that ended unknown',
    async run(args, ctx) {
      ctx.print(await reprocessTransaction(ctx.db, await ctx.temporal(), txnId(required(args, 0, 'txnId')), ctx.actor, ctx.now, args.flags.reason));
    },
  },
  {
    name: 'transaction:show',
    usage: 'transaction:show <txnId>',
    summary: 'Show a transaction: status, failure reason, workflow id, match trace',
    async run(args, ctx) {
      const id = txnId(required(args, 0, 'txnId'));
      const event = await ctx.db.ingestedEvent.findUnique({ where: { id } });
      if (!event) throw new UsageError(`no transaction ${id}`);
      const { payload: _payload, amountMinor, ...rest } = event;
      ctx.print({ ...rest, amountMinor: Number(amountMinor) });
    },
  },
];
