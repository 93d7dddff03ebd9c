// Search attributes and memo of a WebhookDelivery workflow, so that an operator's Temporal
// UI query for a transaction (RewardsTransactionId = "txn_...") finds its webhook
// deliveries beside its lifecycle workflow.
import { TypedSearchAttributes } from '@temporalio/common';
import type { Webhook } from '../../prisma/generated/client';
import {
  RewardsChgId,
  RewardsIssuerId,
  RewardsMerchantId,
  RewardsTransactionId,
} from '../../workflows/search-attributes';

export function webhookWorkflowAttributes(
  webhook: Pick<Webhook, 'issuerId' | 'sourceEventId' | 'data' | 'type' | 'id'>,
) {
  const data = webhook.data as { chgId?: string; merchantId?: string | null; externalId?: string };
  const pairs = [
    { key: RewardsIssuerId, value: webhook.issuerId },
    { key: RewardsTransactionId, value: [webhook.sourceEventId] },
    ...(data.chgId ? [{ key: RewardsChgId, value: data.chgId }] : []),
    ...(data.merchantId ? [{ key: RewardsMerchantId, value: data.merchantId }] : []),
  ];
  return {
    typedSearchAttributes: new TypedSearchAttributes(pairs as ConstructorParameters<typeof TypedSearchAttributes>[0]),
    memo: {
      issuerId: webhook.issuerId,
      chgId: data.chgId ?? null,
      externalId: data.externalId ?? null,
      webhookId: webhook.id,
      type: webhook.type,
    },
  };
}
