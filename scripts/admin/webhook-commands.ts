// Admin CLI commands for webhooks: operator replay, through the same function as the
// operator API (audited alike).
import { isId } from '../../core/ids';
import { replayAsOperator } from '../../api/webhooks/operator-replay';
import { required, UsageError, type Command } from './command';

export const webhookCommands: Command[] = [
  {
    name: 'webhook:replay',
    usage: 'webhook:replay <webhookId>',
    summary: 'Deliver a webhook (evt_) again with the same webhookId and body',
    async run(args, ctx) {
      const webhookId = required(args, 0, 'webhookId');
      if (!isId('evt', webhookId)) throw new UsageError(`${webhookId} is not an evt_ id`);
      ctx.print(await replayAsOperator(ctx.db, await ctx.temporal(), webhookId, ctx.actor, ctx.now));
    },
  },
];
