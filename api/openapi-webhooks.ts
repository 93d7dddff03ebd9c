// The `webhooks` section of /openapi.json (OpenAPI 3.1): what the service POSTs to an
// issuer's endpoint, per type, with its signature headers and delivery rules. The bodies are
// the schemas of core/webhooks/payloads.ts, the same ones the tests validate deliveries with.
import { formatDuration } from '../core/duration';
import { WEBHOOK_TYPES, webhookBodySchema, webhookSchemaName, type WebhookType } from '../core/webhooks/payloads';
import { EXAMPLE_EXPIRY, EXAMPLE_LATER, EXAMPLE_TIME, exampleId } from './schemas/examples';

// One body of each type: the README walk-through's $25.00 purchase at 5% cashback and 3% branded balance.
const exampleAmounts = {
  currency: 'usd',
  earnedAmountMinor: 200,
  cashbackAmountMinor: 125,
  brandedAmountMinor: 75,
  spentAmountMinor: 0,
};
/** An example body: the envelope around `data`. */
const envelope = (type: WebhookType, n: number, createdAt: string, data: object) => ({
  webhookId: exampleId('evt', n),
  type,
  createdAt,
  data,
});
const group = { chgId: exampleId('chg'), merchantId: exampleId('mp') };

// What happens to that purchase's reward afterwards: its 75 cents of branded balance become
// spendable three days later, come within 30 days of expiry, expire; a $10 refund takes back
// part of it; another authorization lapses; a claim for a missed purchase is approved.
const FACT_WEBHOOK_EXAMPLES = {
  reward_available: envelope('reward_available', 3, EXAMPLE_LATER, {
    ...group,
    rewardGrantId: exampleId('rg'),
    transactionId: exampleId('txn'),
    currency: 'usd',
    amountMinor: 75,
    availableAt: EXAMPLE_LATER,
    expiresAt: EXAMPLE_EXPIRY,
  }),
  reward_expiring: envelope('reward_expiring', 4, '2027-02-12T15:09:26.000Z', {
    ...group,
    rewardGrantId: exampleId('rg'),
    currency: 'usd',
    remainingMinor: 75,
    expiresAt: EXAMPLE_EXPIRY,
    daysBeforeExpiry: 30,
  }),
  reward_expired: envelope('reward_expired', 5, EXAMPLE_EXPIRY, {
    ...group,
    rewardGrantIds: [exampleId('rg')],
    currency: 'usd',
    amountMinor: 75,
    rewardEventId: exampleId('brevt', 5),
  }),
  reward_clawed_back: envelope('reward_clawed_back', 6, EXAMPLE_LATER, {
    ...group,
    transactionId: exampleId('txn'),
    refundTransactionId: exampleId('txn', 2),
    currency: 'usd',
    cashbackAmountMinor: 50,
    brandedAmountMinor: 30,
    owedMinor: 0,
    rewardEventIds: [exampleId('brevt', 3), exampleId('brevt', 4)],
  }),
  authorization_lapsed: envelope('authorization_lapsed', 7, EXAMPLE_LATER, {
    ...group,
    authorizationId: exampleId('auth', 2),
    externalId: 'a-2',
    currency: 'usd',
    previewedAmountMinor: 200,
  }),
  endpoint_disabled: envelope('endpoint_disabled', 8, EXAMPLE_EXPIRY, {
    endpointId: exampleId('whe'),
    url: 'https://rewards-hooks.example-issuer.com/webhooks',
    failingSince: EXAMPLE_LATER,
    reason: 'failing',
  }),
  // Customer service credits $5.00 of cashback the purchase should have earned, approving a claim.
  reward_adjusted: envelope('reward_adjusted', 9, EXAMPLE_LATER, {
    chgId: exampleId('chg'),
    adjustmentId: exampleId('adj'),
    balanceType: 'cashback',
    amountMinor: 500,
    merchantId: null,
    reasonCode: 'missing_reward',
    transactionId: exampleId('txn'),
    currency: 'usd',
    rewardEventId: exampleId('brevt', 6),
  }),
  claim_resolved: envelope('claim_resolved', 10, EXAMPLE_LATER, {
    chgId: exampleId('chg'),
    claimId: exampleId('clm'),
    transactionId: exampleId('txn'),
    outcome: 'approved',
    reasonCode: 'operator_approved',
    adjustmentId: exampleId('adj'),
    adjustmentIds: [exampleId('adj')],
  }),
  // Thirty days on, the purchase's $1.25 of cashback is payable, and the issuer's payout run pays it.
  cashback_paid_out: envelope('cashback_paid_out', 11, EXAMPLE_EXPIRY, {
    chgId: exampleId('chg'),
    payoutId: exampleId('po'),
    currency: 'usd',
    amountMinor: 125,
    rewardEventId: exampleId('brevt', 7),
  }),
  payout_completed: envelope('payout_completed', 12, EXAMPLE_EXPIRY, {
    payoutId: exampleId('po'),
    groupCount: 1840,
    currency: 'usd',
    totalMinor: 412_650,
  }),
  // The group is in an auto offer's audience and treated: the app shows the offer.
  offer_available: envelope('offer_available', 13, EXAMPLE_EXPIRY, {
    chgId: exampleId('chg'),
    offerId: exampleId('ofr'),
    merchantId: exampleId('mp'),
  }),
  // The issuer erased the group at the cardholder's request.
  chg_erased: envelope('chg_erased', 14, EXAMPLE_EXPIRY, {
    chgId: exampleId('chg'),
    erasedAt: EXAMPLE_EXPIRY,
  }),
};

const EXAMPLES: Record<WebhookType, object> = {
  ...FACT_WEBHOOK_EXAMPLES,
  qualified_auth: {
    webhookId: exampleId('evt', 2),
    type: 'qualified_auth',
    createdAt: EXAMPLE_TIME,
    data: {
      chgId: exampleId('chg'),
      authorizationId: exampleId('auth'),
      externalId: 'a-1',
      merchantId: exampleId('mp'),
      rewardEventIds: [],
      rewardGrantIds: [],
      ...exampleAmounts,
    },
  },
  qualified_settlement: {
    webhookId: exampleId('evt'),
    type: 'qualified_settlement',
    createdAt: EXAMPLE_TIME,
    data: {
      chgId: exampleId('chg'),
      transactionId: exampleId('txn'),
      authorizationId: exampleId('auth'),
      externalId: 't-1',
      merchantId: exampleId('mp'),
      rewardEventIds: [exampleId('brevt'), exampleId('brevt', 2)],
      rewardGrantIds: [exampleId('rg')],
      ...exampleAmounts,
    },
  },
};

/** The `data` of the type's published example: what a test event (POST /api/v2/webhook-endpoints/{endpointId}/test) sends. */
export function exampleData(type: WebhookType): unknown {
  return (EXAMPLES[type] as { data: unknown }).data;
}

const SIGNATURE_HEADERS = [
  {
    name: 'webhook-id',
    description: 'The webhookId (evt_...): the same on every retry and replay; deduplicate by it.',
    pattern: '^evt_',
  },
  {
    name: 'webhook-timestamp',
    description: 'Unix seconds of this attempt; reject a timestamp more than 5 minutes off.',
    pattern: '^[0-9]+$',
  },
  {
    name: 'webhook-signature',
    description:
      'Standard Webhooks: space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, ' +
      'two during a secret rotation (the previous secret signs beside the new one for 24 hours).',
    pattern: '^v1,',
  },
];

function deliveryRules(retryScheduleMs: readonly number[]): string {
  return (
    `Signed per Standard Webhooks (verify over the raw body before parsing). Success is any 2xx within 10 s. ` +
    `Otherwise it is retried after ${retryScheduleMs.map(formatDuration).join(', ')} (${retryScheduleMs.length + 1} attempts), then marked failed; ` +
    'GET /api/v2/webhooks/{webhookId} shows every attempt and POST .../replay sends it again with the same webhookId and body. ' +
    'The body is byte-identical on every retry and replay. Answer 2xx to a webhookId you already processed.'
  );
}

export function webhookComponents(): Record<string, object> {
  return Object.fromEntries(WEBHOOK_TYPES.map((type) => [webhookSchemaName(type), webhookBodySchema(type)]));
}

export function webhooksSection(retryScheduleMs: readonly number[]): Record<WebhookType, object> {
  const section = {} as Record<WebhookType, object>;
  for (const type of WEBHOOK_TYPES) {
    section[type] = {
      post: {
        operationId: `${type}Webhook`,
        summary: `${type} (sent to your webhook endpoint)`,
        description: deliveryRules(retryScheduleMs),
        tags: ['Webhooks'],
        parameters: SIGNATURE_HEADERS.map((h) => ({
          name: h.name,
          in: 'header',
          required: true,
          description: h.description,
          schema: { type: 'string', pattern: h.pattern },
        })),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { $ref: `#/components/schemas/${webhookSchemaName(type)}` },
              example: EXAMPLES[type],
            },
          },
        },
        responses: {
          '2XX': { description: 'Received: the delivery succeeds and is not retried.' },
          default: { description: 'Anything else, or no answer within 10 s: retried on the schedule.' },
        },
      },
    };
  }
  return section;
}
