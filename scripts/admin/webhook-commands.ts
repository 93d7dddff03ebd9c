// Admin CLI commands for webhooks: operator replay, through the same function as the
// operator API (audited alike), and re-sealing the signing secrets under a new key.
import { isId } from '../../core/ids';
import { replayAsOperator } from '../../api/webhooks/replay';
import { reencryptWebhookSecrets } from '../../core/domain/webhook-secret-keys';
import { recordAudit } from '../../api/audit/store';
import { intFlag, required, UsageError, type Command } from './command';

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
  {
    name: 'webhook:reencrypt',
    usage: 'webhook:reencrypt [--page-size 200]',
    summary: 'Re-seal every webhook signing secret under the first key of WEBHOOK_SECRET_KEYS',
    async run(args, ctx) {
      const pageSize = intFlag(args, 'page-size') ?? 200;
      if (pageSize < 1 || pageSize > 10_000) throw new UsageError('--page-size must be between 1 and 10000');
      const keys = ctx.webhookSecretKeys();
      const result = await reencryptWebhookSecrets(ctx.db, keys, { pageSize });
      // Audited when it changed something: the secrets are the same, the key they are sealed under is not.
      const details = {
        primaryKeyId: keys.primaryKeyId,
        reencrypted: result.reencrypted,
        changedMeanwhile: result.changedMeanwhile,
      };
      if (result.reencrypted > 0)
        await recordAudit(ctx.db, { actor: ctx.actor, action: 'webhook.secrets.reencrypt', details }, ctx.now);
      const others = Object.keys(result.keyIds).filter((id) => id !== keys.primaryKeyId);
      const next =
        others.length === 0
          ? `every endpoint is sealed under "${keys.primaryKeyId}": older keys may be dropped`
          : `endpoints remain under ${others.join(', ')}: once every process seals under "${keys.primaryKeyId}" (it is first everywhere), run this again`;
      ctx.print({ primaryKeyId: keys.primaryKeyId, ...result, next });
    },
  },
];
