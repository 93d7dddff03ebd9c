// Operator replay of any issuer's webhook, audited. The operator API and the admin CLI
// both call this, so both find, replay and audit alike.
import type { Db } from '../../prisma/client';
import { recordAudit } from '../audit/store';
import { findWebhook } from './records';
import type { WorkflowEngine } from '../../core/workflow-engine';
import { replayWebhook, type ReplayStarted } from './replay';

export async function replayAsOperator(
  db: Db,
  temporal: WorkflowEngine | undefined,
  webhookId: string,
  actor: string,
  now: Date,
): Promise<ReplayStarted> {
  const webhook = await findWebhook(db, webhookId);
  const started = await replayWebhook(temporal, webhook);
  await recordAudit(
    db,
    {
      actor,
      action: 'webhook.replay',
      targetId: webhook.id,
      details: { issuerId: webhook.issuerId, workflowId: started.workflowId },
    },
    now,
  );
  return started;
}
