// The webhook contract: what `data` holds for each type, as TypeScript types the activities
// build and as the JSON schemas /openapi.json publishes under `webhooks` (api/openapi.ts).
// Amounts are named as reward-detail names them (earnedAmountMinor, spentAmountMinor), so a
// receiver reconciles a webhook against the API field by field. Records written before this
// contract keep the body they were first sent with (a replay is byte-identical).
import { idPattern } from '../ids';

import {
  FACT_WEBHOOK_DATA_SCHEMAS,
  FACT_WEBHOOK_DESCRIPTIONS,
  FACT_WEBHOOK_TYPES,
  type FactWebhookData,
} from './fact-webhooks';

/** The two purchase moments of SPEC.md: an authorization's preview, a settlement's posting. */
export const PURCHASE_WEBHOOK_TYPES = ['qualified_auth', 'qualified_settlement'] as const;
export type PurchaseWebhookType = (typeof PURCHASE_WEBHOOK_TYPES)[number];

/** Every type the service sends, in the order the reference lists them. */
export const WEBHOOK_TYPES = [...PURCHASE_WEBHOOK_TYPES, ...FACT_WEBHOOK_TYPES] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/** What both types say about the purchase and its reward. */
interface RewardData {
  chgId: string;
  /** The authorization (`auth_`): always in qualified_auth; in qualified_settlement when the settlement named one. */
  authorizationId: string | null;
  /** The issuer's id of the event the webhook is about. */
  externalId: string;
  merchantId: string;
  currency: 'usd';
  rewardEventIds: string[];
  rewardGrantIds: string[];
  earnedAmountMinor: number;
  cashbackAmountMinor: number;
  brandedAmountMinor: number;
  spentAmountMinor: number;
}

/** A preview: what the purchase would earn and spend if it settled now. Nothing is posted. */
export interface QualifiedAuthData extends RewardData {
  authorizationId: string;
}

/** What the settlement posted. */
export interface QualifiedSettlementData extends RewardData {
  transactionId: string;
}

export type WebhookData = QualifiedAuthData | QualifiedSettlementData | FactWebhookData;

const minor = (description: string) => ({ type: 'integer', minimum: 0, description });
const ids = (prefix: 'brevt' | 'rg', description: string) => ({
  type: 'array',
  items: { type: 'string', pattern: idPattern(prefix) },
  description,
});

const rewardProperties = {
  chgId: { type: 'string', pattern: idPattern('chg') },
  externalId: { type: 'string', description: "The issuer's id of the event." },
  merchantId: { type: 'string', pattern: idPattern('mp') },
  currency: { type: 'string', enum: ['usd'] },
  earnedAmountMinor: minor('cashbackAmountMinor + brandedAmountMinor.'),
  cashbackAmountMinor: minor('Cashback earned.'),
  brandedAmountMinor: minor('Branded balance earned at the merchant.'),
  spentAmountMinor: minor('Branded balance spent on the purchase.'),
};
const rewardRequired = [
  'chgId',
  'authorizationId',
  'externalId',
  'merchantId',
  'currency',
  'rewardEventIds',
  'rewardGrantIds',
  'earnedAmountMinor',
  'cashbackAmountMinor',
  'brandedAmountMinor',
  'spentAmountMinor',
];

const purchaseDataSchemas: Record<PurchaseWebhookType, object> = {
  qualified_auth: {
    type: 'object',
    additionalProperties: false,
    required: rewardRequired,
    properties: {
      ...rewardProperties,
      authorizationId: { type: 'string', pattern: idPattern('auth') },
      rewardEventIds: { ...ids('brevt', 'Empty: a preview posts nothing.'), maxItems: 0 },
      rewardGrantIds: { ...ids('rg', 'Empty: a preview posts nothing.'), maxItems: 0 },
    },
  },
  qualified_settlement: {
    type: 'object',
    additionalProperties: false,
    required: [...rewardRequired, 'transactionId'],
    properties: {
      ...rewardProperties,
      transactionId: { type: 'string', pattern: idPattern('txn') },
      authorizationId: {
        type: ['string', 'null'],
        pattern: idPattern('auth'),
        description: 'The authorization the settlement named, if it was ingested.',
      },
      rewardEventIds: ids('brevt', 'The reward events the settlement posted (GET .../rewards/activity).'),
      rewardGrantIds: ids('rg', 'The branded grants it created (GET .../rewards/expiring).'),
    },
  },
};

const dataSchemas: Record<WebhookType, object> = { ...purchaseDataSchemas, ...FACT_WEBHOOK_DATA_SCHEMAS };

const DESCRIPTIONS: Record<WebhookType, string> = {
  ...FACT_WEBHOOK_DESCRIPTIONS,
  qualified_auth:
    'An authorization qualified for a reward: the preview of what its settlement would earn and spend. Nothing is posted yet.',
  qualified_settlement:
    'A settlement posted its reward to the ledger: cashback and branded balance earned, branded balance spent.',
};

/** The schema name in components.schemas of each type's body: reward_expiring → RewardExpiringWebhook. */
export const webhookSchemaName = (type: WebhookType) =>
  `${type.replace(/(^|_)([a-z])/g, (_, _sep: string, c: string) => c.toUpperCase())}Webhook`;

/** The whole body of one webhook type: the envelope and its `data`. Self-contained (no $ref). */
export function webhookBodySchema(type: WebhookType): object {
  return {
    type: 'object',
    description: DESCRIPTIONS[type],
    required: ['webhookId', 'type', 'createdAt', 'data'],
    additionalProperties: false,
    properties: {
      webhookId: {
        type: 'string',
        pattern: idPattern('evt'),
        description: 'The same on every retry and replay (the webhook-id header): deduplicate by it.',
      },
      type: { type: 'string', const: type },
      createdAt: { type: 'string', format: 'date-time', description: 'When the effects it announces were committed.' },
      data: dataSchemas[type],
      test: {
        type: 'boolean',
        const: true,
        description:
          'Only on test events (POST /api/v2/webhook-endpoints/{endpointId}/test): the published example, not a real fact.',
      },
    },
  };
}
