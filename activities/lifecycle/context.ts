// Everything a reward decision about one stored event depends on, read inside the
// activity's database transaction in as few statements as the locks allow (each statement
// costs more than its rows here; see core/domain/ledger/batch.ts):
//   1. the event, locked (a retried or concurrent activity waits, then sees what the first
//      one did), with its issuer, the card's state and the merchants it may match;
//   2. settlement only: the purchase's ledger accounts, created if new and locked in id
//      order, BEFORE anything ledger-derived is read, so that what follows cannot change
//      under the decision (statement snapshots are taken when a statement starts);
//   3. the matched merchant with its offers (and what each budgeted one has used in the
//      purchase's period), the group's activation, what the group already earned per offer
//      (per-group caps) and its branded grants at the merchant.
import { ApplicationFailure } from '@temporalio/activity';
import { Prisma, type IngestedEvent } from '../../prisma/generated/client';
import { matchMerchant, type MatchableMerchant, type MerchantMatch } from '../../core/rules/matching';
import type { EarnOffer } from '../../core/rules/eligibility';
import type { SpendGrant } from '../../core/rules/spend-eligibility';
import type { CatalogueStatus } from '../../core/rules/offer-status';
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import { fromDbMinor, purchaseLockOrder } from '../../core/ledger';
import type { IngestedEvent as EventPayload } from '../../core/domain/events';
import { EVENT_NOT_FOUND } from '../../core/failure-types';
import { idPattern } from '../../core/ids';
import type { SqlTx } from '../../prisma/sql-transaction';
import {
  fundingTermsOf,
  merchantOffersJson,
  withEnrolments,
  toEarnOffer,
  type JsonOffer,
} from '../../core/domain/merchant-offers';
import type { FundingTerms } from '../../core/rules/funding';
import type { MerchantStacking } from '../../core/rules/stacking';
import { lockPurchaseAccounts, type LockedAccount } from '../../core/domain/ledger/accounts';
import type { KnownAccounts } from '../../core/domain/ledger/known-accounts';
import { redeemedByOfferJson } from '../../core/domain/redemptions';
import { progressByOfferJson } from '../../core/domain/offer-progress';
import type { StoredProgress } from '../../core/rules/progress';
import { ENDPOINTS_JSON, toEndpoint, type EndpointState, type JsonEndpoint } from '../webhooks/attempt-state';

// Raw SQL only: the settle and preview steps run it on our pg pool (prisma/sql-transaction.ts),
// the refund step in a Prisma transaction; both handles have what this needs.
type Tx = SqlTx;

const EVENT_COLUMNS = Prisma.sql`e.id, e.issuer_id AS "issuerId", e.kind, e.external_id AS "externalId", e.fingerprint, e.state, e.payload,
  e.chg_id AS "chgId", e.cardholder_id AS "cardholderId", e.card_id AS "cardId", e.amount_minor AS "amountMinor", e.currency,
  e.event_created_at AS "eventCreatedAt", e.authorization_external_id AS "authorizationExternalId", e.related_external_id AS "relatedExternalId",
  e.related_event_id AS "relatedEventId", e.workflow_id AS "workflowId", e.received_at AS "receivedAt", e.state_changed_at AS "stateChangedAt",
  e.handed_over_at AS "handedOverAt", e.handover_attempts AS "handoverAttempts", e.reward_status AS "rewardStatus", e.merchant_id AS "merchantId",
  e.match_trace AS "matchTrace", e.processed_at AS "processedAt", e.failure_reason AS "failureReason"`;

const MP_ID_PATTERN = idPattern('mp');

const notFound = (eventId: string) => ApplicationFailure.nonRetryable(`No stored event ${eventId}`, EVENT_NOT_FOUND);

/** The event, locked for the rest of the transaction. */
export async function lockEvent(tx: Tx, eventId: string): Promise<IngestedEvent> {
  const [event] = await tx.$queryRaw<
    IngestedEvent[]
  >`SELECT ${EVENT_COLUMNS} FROM ingested_event e WHERE e.id = ${eventId} FOR UPDATE`;
  if (!event) throw notFound(eventId);
  return event;
}

export interface ContextMerchant {
  id: string;
  name: string;
  status: CatalogueStatus;
  brandedEnabled: boolean;
  brandedSpendMinimumMinor: number;
  brandedAvailabilityDelayDays: number;
  brandedExpiryDays: number;
  /** How its qualifying offers combine. */
  stacking: MerchantStacking;
  /** Under stack, the cap on the offers applied together (bps of the amount). */
  stackCapBps: number | null;
}

/** A branded grant that can be spent now or later, with its FIFO key. */
export interface ContextGrant extends SpendGrant {
  id: string;
  createdAt: Date;
}

export interface DecisionContext {
  event: IngestedEvent;
  payload: EventPayload;
  /**
   * The instant the purchase is decided as of: its own date (`createdAt`, on the issuer's clock),
   * never the time it is processed, so that a late, retried or reprocessed step decides the same
   * (docs/decisions/0034-a-purchase-decided-as-of-its-date.md).
   */
  asOf: Date;
  /** clockOffsetMs: the sandbox test clock's offset the decision was taken at (0 in production). */
  issuer: {
    id: string;
    environment: 'sandbox' | 'production';
    brandedAvailabilityDelayDays: number;
    /** The return window of cashback an offer does not set its own for. */
    cashbackHoldDays: number;
    clockOffsetMs: number;
  };
  groupStatus: 'active' | 'inactive';
  cardholderStatus: 'active' | 'inactive';
  cardStatus: 'active' | 'inactive';
  match: MerchantMatch;
  merchant: ContextMerchant | null;
  /** The merchant's offers as the catalogue holds them (the match trace shows their rates). */
  offers: EarnOffer[];
  /** The same offers as they can earn here: a merchant without branded balance pays cashback only. */
  earnOffers: EarnOffer[];
  activation: { status: CatalogueStatus; activatedAt: Date } | null;
  earnedSoFarByOffer: Record<string, number>;
  /** The group's purchases keeping a reward from each offer that limits redemptions. */
  redeemedSoFarByOffer: Record<string, number>;
  /** The group's progress on each of the merchant's cumulative offers it has moved (read under
   *  the group's account locks, which every step moving progress takes first). */
  progressByOffer: Record<string, StoredProgress>;
  /** Each offer's own return window for cashback holds (null: the issuer's). */
  returnPeriodDaysByOffer: Record<string, number | null>;
  /** Who funds each offer's rewards and the merchant's commission on them. */
  fundingByOffer: Record<string, FundingTerms>;
  grants: ContextGrant[];
  /** Settlement: the purchase's accounts, locked (with what the group owes, if it has that account). Empty otherwise. */
  accounts: Map<string, LockedAccount>;
  /** A settlement's authorization (`auth_`), when the issuer named one that was ingested. */
  authorizationId: string | null;
  /** The issuer's webhook endpoints, for the first attempts of the step's webhook. */
  endpoints: EndpointState[];
}

interface Head {
  event: IngestedEvent;
  issuerId: string;
  environment: 'sandbox' | 'production';
  issuerDelayDays: number;
  cashbackHoldDays: number;
  clockOffsetMs: number;
  groupStatus: 'active' | 'inactive';
  cardholderStatus: 'active' | 'inactive';
  cardStatus: 'active' | 'inactive';
  candidates: MatchableMerchant[];
  authorizationId: string | null;
  endpoints: JsonEndpoint[];
}

/** The processed settlement of an authorization's purchase, when the authorization came late. */
export interface SettledPurchase {
  settlementId: string;
  merchantId: string | null;
}

/**
 * Locks the event and reads the head of its context in one statement. Returns the event
 * alone when it was processed before (a retried activity answers from what it stored), and
 * with `settledPurchase` instead of a context when it is an authorization whose purchase has
 * already been settled (it arrived late: there is nothing left to preview).
 * `at` is the workflow's clock; the answer's `at` is the issuer's: the same, moved by a sandbox
 * issuer's test clock (read in the same statement, so production pays no query for it). It dates
 * what the step records (processed_at, reward events, the webhook); what the purchase earns and
 * spends, and its grant's dates, are decided as of the purchase's own date (`asOf`).
 */
export async function lockEventWithContext(
  tx: Tx,
  eventId: string,
  workflowAt: Date,
  options: { lockAccounts: boolean; known?: KnownAccounts },
): Promise<{ event: IngestedEvent; at: Date; context?: DecisionContext; settledPurchase?: SettledPurchase }> {
  const [row] = await tx.$queryRaw<
    Array<IngestedEvent & Omit<Head, 'event' | 'issuerId'> & { settledPurchase: SettledPurchase | null }>
  >`
    SELECT ${EVENT_COLUMNS}, i.environment, i.branded_availability_delay_days AS "issuerDelayDays", i.cashback_hold_days AS "cashbackHoldDays",
           i.clock_offset_ms::float8 AS "clockOffsetMs",
           (SELECT status FROM cardholder_group WHERE id = e.chg_id) AS "groupStatus",
           (SELECT status FROM cardholder WHERE id = e.cardholder_id) AS "cardholderStatus",
           (SELECT status FROM card WHERE id = e.card_id) AS "cardStatus",
           (SELECT a.id FROM ingested_event a WHERE a.issuer_id = e.issuer_id AND a.kind = 'auth' AND a.external_id = e.authorization_external_id) AS "authorizationId",
           ${ENDPOINTS_JSON(Prisma.raw('e.issuer_id'))} AS endpoints,
           -- One purchase, one workflow id: a settlement of this authorization that was processed.
           (SELECT jsonb_build_object('settlementId', s.id, 'merchantId', s.merchant_id) FROM ingested_event s
             WHERE e.kind = 'auth' AND s.workflow_id = e.workflow_id AND s.issuer_id = e.issuer_id
               AND s.kind = 'settled' AND s.state = 'settled' AND s.reward_status <> 'pending'
             ORDER BY s.processed_at LIMIT 1) AS "settledPurchase",
           -- Every merchant the issuer may see, matched by the rules (core/rules/matching.ts); a
           -- sandbox event that forces an mp_ id needs that merchant only.
           (SELECT coalesce(jsonb_agg(jsonb_build_object('id', m.id, 'matchDescriptorPatterns', m.match_descriptor_patterns,
                     'matchAcquirerMerchantIds', m.match_acquirer_merchant_ids, 'matchMccs', m.match_mccs)), '[]'::jsonb)
              FROM merchant m
             WHERE (m.issuer_ids IS NULL OR i.id = ANY(m.issuer_ids))
               AND (i.environment <> 'sandbox' OR coalesce(e.payload->>'merchantId', '') !~ ${MP_ID_PATTERN}
                    OR m.id = e.payload->>'merchantId')) AS candidates
      FROM ingested_event e JOIN issuer i ON i.id = e.issuer_id
     WHERE e.id = ${eventId}
       FOR UPDATE OF e`;
  if (!row) throw notFound(eventId);
  const {
    environment,
    issuerDelayDays,
    cashbackHoldDays,
    clockOffsetMs,
    groupStatus,
    cardholderStatus,
    cardStatus,
    candidates,
    authorizationId,
    endpoints,
    settledPurchase,
    ...event
  } = row;
  const at = clockOffsetMs === 0 ? workflowAt : new Date(workflowAt.getTime() + clockOffsetMs);
  if (event.processedAt) return { event, at };
  if (settledPurchase) return { event, at, settledPurchase };
  const head: Head = {
    event,
    issuerId: event.issuerId,
    environment,
    issuerDelayDays,
    cashbackHoldDays,
    clockOffsetMs,
    groupStatus,
    cardholderStatus,
    cardStatus,
    candidates,
    authorizationId,
    endpoints,
  };
  return { event, at, context: await loadRest(tx, head, at, options) };
}

async function loadRest(
  tx: Tx,
  head: Head,
  at: Date,
  options: { lockAccounts: boolean; known?: KnownAccounts },
): Promise<DecisionContext> {
  const { event } = head;
  const payload = event.payload as unknown as EventPayload;
  const match = matchMerchant(
    { merchantId: payload.merchantId, merchantDescriptor: payload.merchantDescriptor, mcc: payload.mcc },
    head.candidates.map((m) => ({
      ...m,
      matchDescriptorPatterns: m.matchDescriptorPatterns ?? [],
      matchAcquirerMerchantIds: m.matchAcquirerMerchantIds ?? [],
      matchMccs: m.matchMccs ?? [],
    })),
    head.environment,
  );
  const base = {
    event,
    payload,
    asOf: event.eventCreatedAt,
    match,
    issuer: {
      id: head.issuerId,
      environment: head.environment,
      brandedAvailabilityDelayDays: head.issuerDelayDays,
      cashbackHoldDays: head.cashbackHoldDays,
      clockOffsetMs: head.clockOffsetMs,
    },
    groupStatus: head.groupStatus,
    cardholderStatus: head.cardholderStatus,
    cardStatus: head.cardStatus,
    authorizationId: head.authorizationId,
    endpoints: head.endpoints.map(toEndpoint),
  };
  if (!match.merchantId) {
    return {
      ...base,
      merchant: null,
      offers: [],
      earnOffers: [],
      activation: null,
      earnedSoFarByOffer: {},
      redeemedSoFarByOffer: {},
      progressByOffer: {},
      returnPeriodDaysByOffer: {},
      fundingByOffer: {},
      grants: [],
      accounts: new Map(),
    };
  }
  const locked = options.lockAccounts
    ? await lockPurchaseAccounts(
        tx,
        purchaseLockOrder(event.issuerId, event.chgId, match.merchantId),
        at,
        options.known,
      )
    : new Map();
  const details = await loadMerchantDetails(tx, {
    issuerId: event.issuerId,
    chgId: event.chgId,
    merchantId: match.merchantId,
    asOf: event.eventCreatedAt,
  });
  return {
    ...base,
    ...details,
    // Branded balance the merchant cannot fund, or that could never be spent before it
    // expires, is not earned: such offers pay cashback only (core/rules/branded-rate.ts).
    earnOffers: details.offers.map((o) =>
      withUsableBranded(o, details.merchant !== null && brandedBalanceUsable(details.merchant, head.issuerDelayDays)),
    ),
    accounts: locked,
  };
}

/**
 * The merchant's terms for the group's purchase as of its date: the merchant, its offers (with
 * each budget's use in the purchase's period), the activation, what the group kept and redeemed
 * per offer, its progress and its branded grants. A settlement stores a targeted offer's first
 * enrolment of the group (`storeEnrolments`); a claim's approval reads it as it would be decided.
 */
export async function loadMerchantDetails(
  tx: Tx,
  p: { issuerId: string; chgId: string; merchantId: string; asOf: Date; storeEnrolments?: boolean },
) {
  const [row] = await tx.$queryRaw<
    Array<{
      merchant: (Omit<ContextMerchant, 'brandedSpendMinimumMinor'> & { brandedSpendMinimumMinor: string }) | null;
      offers: JsonOffer[];
      activation: { status: CatalogueStatus; activatedAt: string } | null;
      earned: Record<string, string>;
      redeemed: Record<string, number>;
      progress: Record<string, { measure: string; rewarded: number }>;
      grants: Array<{ id: string; remainingMinor: string; availableAt: string; expiresAt: string; createdAt: string }>;
    }>
  >`
    SELECT
      (SELECT jsonb_build_object('id', m.id, 'name', m.name, 'status', m.status, 'brandedEnabled', m.branded_enabled,
              'brandedSpendMinimumMinor', m.branded_spend_minimum_minor::text, 'brandedAvailabilityDelayDays', m.branded_availability_delay_days,
              'brandedExpiryDays', m.branded_expiry_days, 'stacking', m.stacking, 'stackCapBps', m.stack_cap_bps)
         FROM merchant m WHERE m.id = ${p.merchantId}) AS merchant,
      -- With what each budgeted offer has used in the purchase's period (read, not locked).
      ${merchantOffersJson(p.merchantId, p.asOf, p.chgId)} AS offers,
      (SELECT jsonb_build_object('status', a.status, 'activatedAt', a.activated_at)
         FROM activation a WHERE a.issuer_id = ${p.issuerId} AND a.chg_id = ${p.chgId} AND a.merchant_id = ${p.merchantId}) AS activation,
      -- Net reward per offer the group has kept (earned minus clawed back), for per-group caps:
      -- from the running totals, a few rows however long the group's history.
      (SELECT coalesce(jsonb_object_agg(x.offer_id, x.net::text), '{}'::jsonb) FROM (
         SELECT offer_id, sum(CASE WHEN type IN ('cashback_earned', 'branded_earned') THEN amount_minor
                                   WHEN type IN ('cashback_clawed_back', 'branded_clawed_back') THEN -amount_minor ELSE 0 END) AS net
           FROM reward_total WHERE issuer_id = ${p.issuerId} AND chg_id = ${p.chgId} AND merchant_id = ${p.merchantId} AND offer_id <> ''
          GROUP BY offer_id) x) AS earned,
      ${redeemedByOfferJson(p)} AS redeemed,
      ${progressByOfferJson(p)} AS progress,
      -- Grants that still hold value and had not expired at the purchase's date: what it may spend
      -- (those not yet available then are read too, for the spend decision's pending balance).
      (SELECT coalesce(jsonb_agg(jsonb_build_object('id', g.id, 'remainingMinor', g.remaining_minor::text, 'availableAt', g.available_at,
              'expiresAt', g.expires_at, 'createdAt', g.created_at)), '[]'::jsonb)
         FROM reward_grant g
        WHERE g.issuer_id = ${p.issuerId} AND g.chg_id = ${p.chgId} AND g.merchant_id = ${p.merchantId}
          AND g.remaining_minor > 0 AND g.expires_at > ${p.asOf}) AS grants`;
  // A targeted offer's first evaluation for the group enrols it, as of its entry, for good.
  const offers: EarnOffer[] = await withEnrolments(
    tx,
    row.offers,
    row.offers.map((o) => toEarnOffer(o, p.asOf)),
    { issuerId: p.issuerId, chgId: p.chgId, merchantId: p.merchantId, at: p.asOf, store: p.storeEnrolments ?? true },
  );
  return {
    merchant: row.merchant && {
      ...row.merchant,
      brandedSpendMinimumMinor: fromDbMinor(row.merchant.brandedSpendMinimumMinor),
    },
    offers,
    activation: row.activation && { status: row.activation.status, activatedAt: new Date(row.activation.activatedAt) },
    returnPeriodDaysByOffer: Object.fromEntries(row.offers.map((o) => [o.id, o.returnPeriodDays])),
    fundingByOffer: Object.fromEntries(row.offers.map((o) => [o.id, fundingTermsOf(o)])),
    earnedSoFarByOffer: Object.fromEntries(
      Object.entries(row.earned).map(([offerId, net]) => [offerId, fromDbMinor(net)]),
    ),
    redeemedSoFarByOffer: row.redeemed,
    progressByOffer: Object.fromEntries(
      Object.entries(row.progress).map(([offerId, v]) => [
        offerId,
        { measure: fromDbMinor(v.measure), rewarded: v.rewarded },
      ]),
    ),
    grants: row.grants.map((g) => ({
      id: g.id,
      remainingMinor: fromDbMinor(g.remainingMinor),
      availableAt: new Date(g.availableAt),
      expiresAt: new Date(g.expiresAt),
      createdAt: new Date(g.createdAt),
    })),
  };
}
