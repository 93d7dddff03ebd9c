// What follows an endpoint's disabling for failing (attempt.ts): the `endpoint_disabled` event
// to the issuer's other endpoints that subscribe, an audit-log entry and the metric. One fact
// per run of failures (factKey.endpointDisabled), so two attempts that both saw the endpoint
// cross the line announce it once.
import type { Db } from '../../prisma/client';
import { sqlTransaction } from '../../prisma/sql-transaction';
import type { Logger } from '../../core/logger';
import { newId } from '../../core/ids';
import { factKey } from '../../core/webhooks/fact-webhooks';
import { webhookEndpointsDisabled } from '../../core/metrics';
import { recordFactWebhooks } from '../../core/domain/webhook-records';

export interface DisabledEndpoint {
  id: string;
  issuerId: string;
  url: string;
  failingSince: string;
  disabledAt: string;
}

/** The actor of audit entries the service writes itself. */
const SERVICE_ACTOR = 'service';

export async function announceDisabled(deps: { db: Db; logger: Logger }, endpoint: DisabledEndpoint): Promise<void> {
  const at = new Date(endpoint.disabledAt);
  const failingSince = new Date(endpoint.failingSince);
  const written = await sqlTransaction(deps.db, async (tx) => {
    const ids = await recordFactWebhooks(tx, [
      {
        issuerId: endpoint.issuerId,
        type: 'endpoint_disabled',
        factKey: factKey.endpointDisabled(endpoint.id, failingSince),
        sourceId: endpoint.id,
        data: {
          endpointId: endpoint.id,
          url: endpoint.url,
          failingSince: failingSince.toISOString(),
          reason: 'failing',
        },
        at,
      },
    ]);
    await tx.$executeRaw`
      INSERT INTO operator_audit_log (id, actor, action, target_id, details, created_at)
      SELECT ${newId('aud')}, ${SERVICE_ACTOR}, 'webhook_endpoint.disabled', ${endpoint.id},
             ${JSON.stringify({ issuerId: endpoint.issuerId, reason: 'failing', failingSince: failingSince.toISOString() })}::jsonb, ${at}
       WHERE NOT EXISTS (SELECT 1 FROM operator_audit_log WHERE action = 'webhook_endpoint.disabled' AND target_id = ${endpoint.id}
                           AND details->>'failingSince' = ${failingSince.toISOString()})`;
    return ids;
  });
  webhookEndpointsDisabled.inc();
  deps.logger.warn(
    {
      endpointId: endpoint.id,
      issuerId: endpoint.issuerId,
      failingSince: endpoint.failingSince,
      announced: written.length,
    },
    'webhook endpoint disabled: every attempt failed for too long',
  );
}
