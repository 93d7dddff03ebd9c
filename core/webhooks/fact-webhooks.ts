// Fact webhooks: every webhook type beyond the purchase's two (payloads.ts), each announcing one
// fact: what happens to a group's rewards after the purchase (API.md, "Cardholder reward events"),
// to the issuer's endpoints, claims and payouts. Each fact has its own idempotency key (factKey
// below), so no crash, retry, replay or clock move sends a fact twice. The `data` of each type is
// published in /openapi.json `webhooks` from the schemas here. (Not the ledger's reward events,
// `brevt_`, whose types are REWARD_EVENT_TYPES in core/ledger.)
import { idPattern } from '../ids';
import { ADJUSTMENT_REASON_CODES } from '../rules/adjustments';

/**
 * Every type beyond the purchase's two, recorded the same way (core/domain/webhook-records.ts).
 * `endpoint_disabled` is about the issuer's integration rather than a cardholder's reward, and
 * goes the same way.
 */
export const FACT_WEBHOOK_TYPES = [
  'reward_available',
  'reward_expiring',
  'reward_expired',
  'reward_clawed_back',
  'authorization_lapsed',
  'endpoint_disabled',
  'reward_adjusted',
  'claim_resolved',
  'cashback_paid_out',
  'payout_completed',
  'offer_available',
  'chg_erased',
] as const;
export type FactWebhookType = (typeof FACT_WEBHOOK_TYPES)[number];

/** Branded balance became spendable: the grant's availableAt passed with value left. */
export interface RewardAvailableData {
  chgId: string;
  merchantId: string;
  rewardGrantId: string;
  /** The purchase that earned it; null for balance not earned by a purchase. */
  transactionId: string | null;
  currency: 'usd';
  /** What is left of the grant now. */
  amountMinor: number;
  availableAt: string;
  expiresAt: string;
}

/** A grant with value left came within one of the issuer's notice lead times of its expiry. */
export interface RewardExpiringData {
  chgId: string;
  merchantId: string;
  rewardGrantId: string;
  currency: 'usd';
  remainingMinor: number;
  expiresAt: string;
  /** The lead time reached: the grant expires in at most this many days. */
  daysBeforeExpiry: number;
}

/** Branded balance expired: what was left of the grants moved to breakage. */
export interface RewardExpiredData {
  chgId: string;
  merchantId: string;
  rewardGrantIds: string[];
  currency: 'usd';
  amountMinor: number;
  /** The `branded_expired` reward event (GET .../rewards/activity). */
  rewardEventId: string;
}

/** A refund took back reward its purchase earned. */
export interface RewardClawedBackData {
  chgId: string;
  merchantId: string;
  /** The purchase. */
  transactionId: string;
  refundTransactionId: string;
  currency: 'usd';
  cashbackAmountMinor: number;
  brandedAmountMinor: number;
  /** The part of cashbackAmountMinor the group could not give back (it was paid out): it owes it. */
  owedMinor: number;
  rewardEventIds: string[];
}

/** An authorization's preview lapsed: no settlement arrived within the time-out. */
export interface AuthorizationLapsedData {
  chgId: string;
  merchantId: string;
  authorizationId: string;
  externalId: string;
  currency: 'usd';
  /** What the preview said the purchase would earn (qualified_auth's earnedAmountMinor). */
  previewedAmountMinor: number;
}

/** One of the issuer's endpoints was disabled because every attempt to it failed for too long. */
export interface EndpointDisabledData {
  endpointId: string;
  url: string;
  /** The first failure of the run of failures that disabled it. */
  failingSince: string;
  reason: 'failing';
}

/** Customer service posted an adjustment (POST /api/v2/chg/{chgId}/adjustments, or a claim's approval). */
export interface RewardAdjustedData {
  chgId: string;
  adjustmentId: string;
  balanceType: 'cashback' | 'branded';
  /** Signed: a credit is positive, a debit negative. */
  amountMinor: number;
  merchantId: string | null;
  reasonCode: string;
  transactionId: string | null;
  currency: 'usd';
  /** The cashback_adjusted or branded_adjusted reward event. */
  rewardEventId: string;
}

/** A claim ended: rejected (automatically or by an operator) or approved. */
export interface ClaimResolvedData {
  chgId: string;
  claimId: string;
  transactionId: string | null;
  outcome: 'approved' | 'rejected';
  reasonCode: string;
  /** The first adjustment its approval posted; null when rejected. */
  adjustmentId: string | null;
  adjustmentIds: string[];
}

/** A group's payable cashback was paid out (a payout run's line, or a single group's payout). */
export interface CashbackPaidOutData {
  chgId: string;
  payoutId: string;
  currency: 'usd';
  amountMinor: number;
  /** The cashback_paid_out reward event (GET .../rewards/activity). */
  rewardEventId: string;
}

/** A payout run finished: every group it pays is paid. */
export interface PayoutCompletedData {
  payoutId: string;
  groupCount: number;
  currency: 'usd';
  totalMinor: number;
}

/** A group was enrolled as treated in an auto offer: the issuer's app may show it (no activation needed). */
export interface OfferAvailableData {
  chgId: string;
  offerId: string;
  merchantId: string;
}

/** A group was erased: its personal fields are tombstones; its ids, balances and history stay. */
export interface ChgErasedData {
  chgId: string;
  erasedAt: string;
}

export type FactWebhookData =
  | RewardAvailableData
  | RewardExpiringData
  | RewardExpiredData
  | RewardClawedBackData
  | AuthorizationLapsedData
  | EndpointDisabledData
  | RewardAdjustedData
  | ClaimResolvedData
  | CashbackPaidOutData
  | PayoutCompletedData
  | OfferAvailableData
  | ChgErasedData;

/**
 * The idempotency key of a fact: at most one webhook record has it. Each names what happened
 * to what, never when it was noticed, so a second scan, a clock advanced twice over the same
 * instant or a retried step finds the first record.
 */
export const factKey = {
  rewardAvailable: (grantId: string) => `reward_available:${grantId}`,
  rewardExpiring: (grantId: string, daysBeforeExpiry: number) => `reward_expiring:${grantId}:${daysBeforeExpiry}`,
  rewardExpired: (grantId: string) => `reward_expired:${grantId}`,
  rewardClawedBack: (refundEventId: string) => `reward_clawed_back:${refundEventId}`,
  authorizationLapsed: (authorizationId: string) => `authorization_lapsed:${authorizationId}`,
  /** One per run of failures: re-enabled and failing again for as long is a new fact. */
  endpointDisabled: (endpointId: string, failingSince: Date) =>
    `endpoint_disabled:${endpointId}:${failingSince.toISOString()}`,
  rewardAdjusted: (adjustmentId: string) => `reward_adjusted:${adjustmentId}`,
  claimResolved: (claimId: string) => `claim_resolved:${claimId}`,
  cashbackPaidOut: (payoutId: string, chgId: string) => `cashback_paid_out:${payoutId}:${chgId}`,
  payoutCompleted: (payoutId: string) => `payout_completed:${payoutId}`,
  offerAvailable: (offerId: string, chgId: string) => `offer_available:${offerId}:${chgId}`,
  chgErased: (chgId: string) => `chg_erased:${chgId}`,
};

const minor = (description: string) => ({ type: 'integer', minimum: 0, description });
const id = (prefix: Parameters<typeof idPattern>[0], description?: string) => ({
  type: 'string',
  pattern: idPattern(prefix),
  ...(description ? { description } : {}),
});
const time = (description: string) => ({ type: 'string', format: 'date-time', description });
const currency = { type: 'string', enum: ['usd'] };

function object(properties: Record<string, object>): object {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
}

export const FACT_WEBHOOK_DATA_SCHEMAS: Record<FactWebhookType, object> = {
  reward_available: object({
    chgId: id('chg'),
    merchantId: id('mp'),
    rewardGrantId: id('rg', 'The grant (GET .../rewards/expiring lists it while it holds value).'),
    transactionId: { type: ['string', 'null'], pattern: idPattern('txn'), description: 'The purchase that earned it.' },
    currency,
    amountMinor: minor('What is left of the grant, now spendable at the merchant.'),
    availableAt: time('When it became spendable.'),
    expiresAt: time('When what is left of it expires.'),
  }),
  reward_expiring: object({
    chgId: id('chg'),
    merchantId: id('mp'),
    rewardGrantId: id('rg'),
    currency,
    remainingMinor: minor('What will expire unless spent.'),
    expiresAt: time('When it expires.'),
    daysBeforeExpiry: {
      type: 'integer',
      minimum: 1,
      maximum: 365,
      description: "The issuer's notice lead time reached: it expires in at most this many days.",
    },
  }),
  reward_expired: object({
    chgId: id('chg'),
    merchantId: id('mp'),
    rewardGrantIds: { type: 'array', minItems: 1, items: id('rg'), description: 'The grants that expired.' },
    currency,
    amountMinor: minor('What expired: moved to breakage in the ledger.'),
    rewardEventId: id('brevt', 'The branded_expired reward event (GET .../rewards/activity).'),
  }),
  reward_clawed_back: object({
    chgId: id('chg'),
    merchantId: id('mp'),
    transactionId: id('txn', 'The purchase the refund names.'),
    refundTransactionId: id('txn', 'The refund.'),
    currency,
    cashbackAmountMinor: minor('Cashback taken back (with branded balance already spent, taken from cashback).'),
    brandedAmountMinor: minor('Branded balance taken back.'),
    owedMinor: minor(
      'The part of cashbackAmountMinor the group no longer held (it was paid out): it owes it, and its next cashback repays it.',
    ),
    rewardEventIds: {
      type: 'array',
      items: id('brevt'),
      description: 'The clawback reward events (GET .../transaction/{txnId}/reward-detail of the purchase).',
    },
  }),
  authorization_lapsed: object({
    chgId: id('chg'),
    merchantId: id('mp'),
    authorizationId: id('auth'),
    externalId: { type: 'string', description: "The issuer's id of the authorization." },
    currency,
    previewedAmountMinor: minor("What its preview said the purchase would earn (qualified_auth's earnedAmountMinor)."),
  }),
  endpoint_disabled: object({
    endpointId: id('whe', 'The endpoint that was disabled (GET /api/v2/webhook-endpoints/{endpointId}).'),
    url: { type: 'string', description: 'Its URL.' },
    failingSince: time('The first failure of the run of failures that disabled it.'),
    reason: { type: 'string', enum: ['failing'], description: 'Why: every attempt failed for too long.' },
  }),
  reward_adjusted: object({
    chgId: id('chg'),
    adjustmentId: id('adj', 'The adjustment (GET /api/v2/chg/{chgId}/adjustments/{adjustmentId}).'),
    balanceType: { type: 'string', enum: ['cashback', 'branded'] },
    amountMinor: { type: 'integer', not: { const: 0 }, description: 'Signed: a credit is positive, a debit negative.' },
    merchantId: {
      type: ['string', 'null'],
      pattern: idPattern('mp'),
      description: 'The merchant of a branded adjustment.',
    },
    reasonCode: { type: 'string', enum: [...ADJUSTMENT_REASON_CODES] },
    transactionId: {
      type: ['string', 'null'],
      pattern: idPattern('txn'),
      description: 'The purchase it corrects, when it names one.',
    },
    currency,
    rewardEventId: id('brevt', 'The cashback_adjusted or branded_adjusted reward event (GET .../rewards/activity).'),
  }),
  claim_resolved: object({
    chgId: id('chg'),
    claimId: id('clm', 'The claim (GET /api/v2/chg/{chgId}/claims/{claimId}).'),
    transactionId: { type: ['string', 'null'], pattern: idPattern('txn'), description: 'The purchase claimed for.' },
    outcome: { type: 'string', enum: ['approved', 'rejected'] },
    reasonCode: { type: 'string', description: 'Why: the rejection reason, or operator_approved.' },
    adjustmentId: {
      type: ['string', 'null'],
      pattern: idPattern('adj'),
      description: 'The first adjustment the approval posted; null when rejected.',
    },
    adjustmentIds: { type: 'array', items: id('adj'), description: 'Every adjustment the approval posted.' },
  }),
  cashback_paid_out: object({
    chgId: id('chg'),
    payoutId: id('po', 'The payout (GET /api/v2/payouts/{payoutId}).'),
    currency,
    amountMinor: { type: 'integer', minimum: 1, description: 'Paid out: the issuer credits it to the cardholder.' },
    rewardEventId: id('brevt', 'The cashback_paid_out reward event (GET .../rewards/activity).'),
  }),
  payout_completed: object({
    payoutId: id('po', 'The payout run (GET /api/v2/payouts/{payoutId}; its items file lists every group paid).'),
    groupCount: { type: 'integer', minimum: 0, description: 'Groups paid.' },
    currency,
    totalMinor: minor('Paid in all.'),
  }),
  offer_available: object({
    chgId: id('chg'),
    offerId: id('ofr', 'The offer (GET /api/v2/chg/{chgId}/offer/{offerId} shows it to this group).'),
    merchantId: id('mp'),
  }),
  chg_erased: object({
    chgId: id('chg', 'The erased group: erase your own copy of its personal data.'),
    erasedAt: time('When the erasure committed.'),
  }),
};

export const FACT_WEBHOOK_DESCRIPTIONS: Record<FactWebhookType, string> = {
  reward_available:
    "Branded balance became spendable at its merchant: the grant's availability delay passed with value left.",
  reward_expiring:
    "Branded balance will expire: a grant with value left came within one of the issuer's notice lead times " +
    '(expiryNoticeDays, default 30 and 7 days) of its expiry. One per grant and lead time.',
  reward_expired: 'Branded balance expired unspent: what was left moved to breakage in the ledger.',
  reward_clawed_back: 'A refund took back reward its purchase earned (cashback, branded balance or both).',
  authorization_lapsed:
    'An authorization with a qualified preview lapsed: no settlement arrived within the settlement time-out, so its preview no longer holds.',
  endpoint_disabled:
    "One of the issuer's webhook endpoints was disabled because every attempt to it failed for WEBHOOK_ENDPOINT_DISABLE_AFTER " +
    '(5 days unless configured). Sent to its other endpoints that subscribe; re-enable it with PATCH, then recover what it missed.',
  reward_adjusted:
    "Customer service credited or debited the group's cashback or branded balance (an adjustment), funded by the issuer.",
  claim_resolved:
    'A claim (missing or wrong reward) ended: rejected with the reason its evidence proves, or approved with the adjustments it posted.',
  cashback_paid_out:
    "A group's payable cashback was paid out, by a payout run (POST /api/v2/payouts) or a single group's payout: credit it to the cardholder.",
  payout_completed:
    'A payout run finished: every group it pays is paid, and its items file (GET /api/v2/payouts/{payoutId}/items) is final.',
  offer_available:
    'A group was enrolled as treated in an auto offer (one in its audience qualifies without activating the merchant): show ' +
    'it in your app. One per group and offer; a group held out as the control never gets one.',
  chg_erased:
    "A group was erased (POST /api/v2/chg/{chgId}/erase): its, its cardholders' and cards' personal fields are tombstones, " +
    'its ids, balances and history stay. Later events naming its external ids are refused chg_erased.',
};
