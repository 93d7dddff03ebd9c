// What a claim's decision depends on, read in the deciding transaction: the claimed purchase
// (by txn_ id, else by the issuer's external id, a settlement before an authorization), its
// match trace, the reward it kept, and the rules of the merchant in question evaluated at the
// purchase's time. The evidence stored with the claim is this, so the decision can be checked.
import type { Claim, IngestedEvent } from '../../prisma/generated/client';
import { evaluateEarn, type EarnDecision, type EarnOffer, type EarnReason } from '../../core/rules/eligibility';
import {
  merchantInQuestion,
  type ClaimFacts,
  type ClaimedTransaction,
  type ClaimProgress,
  type ClaimReason,
} from '../../core/rules/claims';
import type { CatalogueStatus } from '../../core/rules/offer-status';
import { brandedBalanceUsable, withUsableBranded } from '../../core/rules/branded-rate';
import { stackingPolicy, type MerchantStacking } from '../../core/rules/stacking';
import {
  KEPT_OF_OFFER,
  merchantOffersJson,
  toEarnOffer,
  withEnrolments,
  type JsonOffer,
} from '../../core/domain/merchant-offers';
import type { IngestedEvent as EventPayload } from '../../core/domain/events';
import { fromDbMinor } from '../../core/ledger';
import type { Tx } from '../../core/domain/ledger';
import type { BudgetState } from '../../core/rules/budget';
import { redeemedByOfferJson } from '../../core/domain/redemptions';
import { cumulativeTermsOf } from '../../core/rules/progress';

export interface ClaimEvidence {
  transaction: {
    id: string;
    kind: string;
    externalId: string;
    amountMinor: number;
    currency: string;
    createdAt: string;
    rewardStatus: string;
    merchantDescriptor: string | null;
  } | null;
  /** The match trace recorded when the purchase was processed (GET .../match-trace). */
  matchTrace: unknown;
  /** The purchase's refunds received, each with whether its clawback was processed. */
  refunds: Array<{ id: string; amountMinor: number; processed: boolean }>;
  /** What the processed refunds took of the purchase: the rules' reward is net of their share. */
  refundedMinor: number;
  /** Reward the purchase keeps, per balance type: earned and credited to it, less what its
   *  refunds took back (debits that name it are not counted). */
  keptCashbackMinor: number;
  keptBrandedMinor: number;
  /** The rules of the merchant in question at the purchase's time. */
  rules: {
    merchantId: string;
    eligible: boolean;
    reasons: EarnReason[];
    winningOfferId: string | null;
    /** The amount the reward was computed on: the purchase less the branded balance it spent. */
    eligibleAmountMinor: number;
  } | null;
}

/** What a claim reads of the match trace the settlement recorded (activities/lifecycle/decide.ts). */
interface RecordedTrace {
  merchantMatch?: { merchantId?: string | null };
  earn?: { eligible: boolean; reasons: EarnReason[] } | null;
  arithmetic?: { amountMinor?: number; spentMinor?: number; eligibleAmountMinor?: number };
  /** Each budgeted offer's budget as the settlement read it (activities/lifecycle/decide.ts). */
  budgets?: Record<string, BudgetState>;
}

export async function loadClaimFacts(tx: Tx, claim: Claim): Promise<{ facts: ClaimFacts; evidence: ClaimEvidence }> {
  const event = await findClaimedEvent(tx, claim);
  const trace = (event?.matchTrace ?? null) as RecordedTrace | null;
  const kept = event ? await keptReward(tx, event) : { cashback: 0, branded: 0 };
  const refunds = event ? await refundsOf(tx, event) : [];
  const refundedMinor = refunds.filter((r) => r.processed).reduce((sum, r) => sum + r.amountMinor, 0);
  const transaction: ClaimedTransaction | null = event && {
    kind: event.kind as 'auth' | 'settled',
    rewardStatus: event.rewardStatus,
    currency: event.currency,
    isRefund: event.state === 'refunded',
    matchedMerchantId: event.merchantId ?? trace?.merchantMatch?.merchantId ?? null,
    recordedEarn: trace?.earn ? { eligible: trace.earn.eligible, reasons: trace.earn.reasons } : null,
    amountMinor: fromDbMinor(event.amountMinor),
    refundedMinor,
    refundsReceivedMinor: refunds.reduce((sum, r) => sum + r.amountMinor, 0),
    keptCashbackMinor: kept.cashback,
    keptBrandedMinor: kept.branded,
  };
  const partial = { reason: claim.reason as ClaimReason, claimedMerchantId: claim.merchantId, transaction };
  const merchantId = merchantInQuestion(partial);
  // The recorded trace proves the group, cardholder and card were active when it was eligible
  // at the matched merchant; their states now may have changed since.
  const activeThen = merchantId === transaction?.matchedMerchantId && transaction?.recordedEarn?.eligible === true;
  const eligibleAmountMinor = event ? earnedOnMinor(event, trace) : 0;
  // At the matched merchant, each budget as the settlement found it: what was left then is what the
  // purchase could get, whatever refunds have given back since.
  const recordedBudgets = merchantId === transaction?.matchedMerchantId ? (trace?.budgets ?? {}) : {};
  const evaluated =
    event && merchantId
      ? await evaluateAt(tx, event, merchantId, { activeThen, eligibleAmountMinor, recordedBudgets })
      : null;
  const evaluation = evaluated?.decision ?? null;
  const progress = evaluated && event ? await progressFacts(tx, event, evaluated) : [];
  return {
    facts: { ...partial, evaluation, progress },
    evidence: {
      transaction: event && {
        id: event.id,
        kind: event.kind,
        externalId: event.externalId,
        amountMinor: fromDbMinor(event.amountMinor),
        currency: event.currency,
        createdAt: event.eventCreatedAt.toISOString(),
        rewardStatus: event.rewardStatus,
        merchantDescriptor: (event.payload as { merchantDescriptor?: string }).merchantDescriptor ?? null,
      },
      matchTrace: event?.matchTrace ?? null,
      refunds,
      refundedMinor,
      keptCashbackMinor: kept.cashback,
      keptBrandedMinor: kept.branded,
      rules:
        evaluation && merchantId
          ? {
              merchantId,
              eligible: evaluation.eligible,
              reasons: evaluation.reasons,
              winningOfferId: evaluation.winningOfferId ?? null,
              eligibleAmountMinor,
            }
          : null,
    },
  };
}

/** The claimed event of the claim's group: by id, else by external id, a settlement first. */
export async function findClaimedEvent(tx: Tx, claim: Claim): Promise<IngestedEvent | null> {
  const scope = { issuerId: claim.issuerId, chgId: claim.chgId };
  if (claim.transactionId) return tx.ingestedEvent.findFirst({ where: { ...scope, id: claim.transactionId } });
  if (!claim.externalId) return null;
  return (
    (await tx.ingestedEvent.findFirst({ where: { ...scope, externalId: claim.externalId, kind: 'settled' } })) ??
    (await tx.ingestedEvent.findFirst({ where: { ...scope, externalId: claim.externalId, kind: 'auth' } }))
  );
}

/**
 * The amount the settlement computed the reward on: what branded balance did not pay, as its
 * trace recorded it. Read, never decided again: the balance the purchase could spend then is
 * not the balance now, and the reward to compare with is the one the rules gave on that amount.
 * Without a recorded figure (no trace yet) the whole amount counts.
 */
function earnedOnMinor(event: IngestedEvent, trace: RecordedTrace | null): number {
  const amountMinor = fromDbMinor(event.amountMinor);
  const recorded = trace?.arithmetic?.eligibleAmountMinor;
  return typeof recorded === 'number' && Number.isSafeInteger(recorded) && recorded >= 0 && recorded <= amountMinor
    ? recorded
    : amountMinor;
}

/**
 * What the purchase keeps of its own reward: what it earned and what credits that name it gave
 * (an approved claim's, a goodwill credit's), less what its refunds took back of each, the value
 * of spent branded balance taken from cashback counted as branded. A debit that names the purchase
 * (a correction) is left out: a claim is about a missing reward, never about undoing a debit. A
 * cumulative offer's completion the purchase reached is not its own reward, and is left out too.
 */
async function keptReward(tx: Tx, event: IngestedEvent): Promise<{ cashback: number; branded: number }> {
  const [row] = await tx.$queryRaw<{ cashback: string; branded: string }[]>`
    SELECT coalesce(sum(CASE
             WHEN type = 'cashback_earned' THEN amount_minor
             WHEN type = 'cashback_clawed_back' AND NOT covers_branded_shortfall THEN -amount_minor
             WHEN type = 'cashback_adjusted' AND source_event_id IS NULL AND amount_minor > 0 THEN amount_minor
             WHEN type = 'cashback_adjusted' AND source_event_id IS NOT NULL AND NOT covers_branded_shortfall THEN amount_minor
             ELSE 0 END), 0)::text AS cashback,
           coalesce(sum(CASE
             WHEN type = 'branded_earned' THEN amount_minor
             WHEN type = 'branded_clawed_back' THEN -amount_minor
             WHEN type = 'cashback_clawed_back' AND covers_branded_shortfall THEN -amount_minor
             WHEN type = 'branded_adjusted' AND source_event_id IS NULL AND amount_minor > 0 THEN amount_minor
             WHEN type = 'branded_adjusted' AND source_event_id IS NOT NULL THEN amount_minor
             WHEN type = 'cashback_adjusted' AND source_event_id IS NOT NULL AND covers_branded_shortfall THEN amount_minor
             ELSE 0 END), 0)::text AS branded
      FROM reward_event
     WHERE issuer_id = ${event.issuerId} AND chg_id = ${event.chgId}
       AND transaction_id = ${event.id} AND completion IS NULL`;
  return { cashback: fromDbMinor(row.cashback), branded: fromDbMinor(row.branded) };
}

/** The purchase's refunds received, oldest first, each with whether its clawback was processed. */
async function refundsOf(
  tx: Tx,
  event: IngestedEvent,
): Promise<Array<{ id: string; amountMinor: number; processed: boolean }>> {
  if (event.kind !== 'settled') return [];
  const rows = await tx.ingestedEvent.findMany({
    // One in another currency took nothing back (and is no part of this purchase's amount).
    where: {
      issuerId: event.issuerId,
      relatedEventId: event.id,
      kind: 'settled',
      state: 'refunded',
      currency: event.currency,
    },
    select: { id: true, amountMinor: true, processedAt: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((r) => ({ id: r.id, amountMinor: fromDbMinor(r.amountMinor), processed: r.processedAt !== null }));
}

/**
 * The merchant's rules for this purchase at its createdAt: its offers, the group's activation
 * and the group, cardholder and card as they are now (their history is not kept), with what
 * the group earned per offer so far (per-group caps). The offers qualify on the whole amount
 * and reward the amount left after branded spend, as at settlement. Budgets: as the settlement
 * recorded them where it did, else as the purchase's period stands now.
 */
async function evaluateAt(
  tx: Tx,
  event: IngestedEvent,
  merchantId: string,
  {
    activeThen,
    eligibleAmountMinor,
    recordedBudgets,
  }: { activeThen: boolean; eligibleAmountMinor: number; recordedBudgets: Record<string, BudgetState> },
): Promise<{ decision: EarnDecision; offers: EarnOffer[] } | null> {
  const [row] = await tx.$queryRaw<
    Array<{
      merchant_status: CatalogueStatus | null;
      branded: { brandedEnabled: boolean; brandedAvailabilityDelayDays: number; brandedExpiryDays: number } | null;
      stacking: { stacking: MerchantStacking; stackCapBps: number | null } | null;
      issuer_delay_days: number;
      offers: JsonOffer[];
      activation: { status: CatalogueStatus; activatedAt: string } | null;
      group_status: CatalogueStatus;
      cardholder_status: CatalogueStatus | null;
      card_status: CatalogueStatus | null;
      earned: Record<string, string>;
      redeemed: Record<string, number>;
    }>
  >`
    SELECT
      (SELECT m.status FROM merchant m WHERE m.id = ${merchantId}
          AND (m.issuer_ids IS NULL OR ${event.issuerId} = ANY (m.issuer_ids))) AS merchant_status,
      (SELECT jsonb_build_object('brandedEnabled', m.branded_enabled, 'brandedAvailabilityDelayDays', m.branded_availability_delay_days,
              'brandedExpiryDays', m.branded_expiry_days) FROM merchant m WHERE m.id = ${merchantId}) AS branded,
      (SELECT jsonb_build_object('stacking', m.stacking, 'stackCapBps', m.stack_cap_bps) FROM merchant m WHERE m.id = ${merchantId}) AS stacking,
      (SELECT i.branded_availability_delay_days FROM issuer i WHERE i.id = ${event.issuerId}) AS issuer_delay_days,
      ${merchantOffersJson(merchantId, event.eventCreatedAt, event.chgId)} AS offers,
      (SELECT jsonb_build_object('status', a.status, 'activatedAt', a.activated_at)
         FROM activation a WHERE a.issuer_id = ${event.issuerId} AND a.chg_id = ${event.chgId} AND a.merchant_id = ${merchantId}) AS activation,
      (SELECT g.status FROM cardholder_group g WHERE g.id = ${event.chgId}) AS group_status,
      (SELECT c.status FROM cardholder c WHERE c.id = ${event.cardholderId}) AS cardholder_status,
      (SELECT c.status FROM card c WHERE c.id = ${event.cardId}) AS card_status,
      -- What the group kept per offer (per-group caps), less this purchase's own: the rules are
      -- asked what the purchase earns, not what it would earn on top of itself.
      (SELECT coalesce(jsonb_object_agg(x.offer_id, x.net::text), '{}'::jsonb) FROM (
         SELECT offer_id, sum(net) AS net FROM (
           SELECT offer_id, sum(${KEPT_OF_OFFER}) AS net
             FROM reward_total WHERE issuer_id = ${event.issuerId} AND chg_id = ${event.chgId} AND merchant_id = ${merchantId} AND offer_id <> ''
            GROUP BY offer_id
           UNION ALL
           SELECT offer_id, -sum(${KEPT_OF_OFFER})
             FROM reward_event WHERE issuer_id = ${event.issuerId} AND chg_id = ${event.chgId} AND transaction_id = ${event.id}
              AND merchant_id = ${merchantId} AND offer_id IS NOT NULL
            GROUP BY offer_id) y
         GROUP BY offer_id) x) AS earned,
      ${redeemedByOfferJson({ issuerId: event.issuerId, chgId: event.chgId, merchantId, exceptTransactionId: event.id })} AS redeemed`;
  if (!row?.merchant_status) return null;
  const payload = event.payload as EventPayload;
  const offers = await offersAsSettled(tx, event, merchantId, row, recordedBudgets);
  const decision = evaluateEarn({
    merchant: { id: merchantId, status: row.merchant_status },
    offers,
    activation: row.activation && {
      status: row.activation.status,
      activatedAt: new Date(row.activation.activatedAt),
    },
    groupStatus: activeThen ? 'active' : row.group_status,
    cardholderStatus: activeThen ? 'active' : (row.cardholder_status ?? undefined),
    cardStatus: activeThen ? 'active' : (row.card_status ?? undefined),
    transaction: {
      amountMinor: fromDbMinor(event.amountMinor),
      eligibleAmountMinor,
      mcc: payload.mcc,
      currency: event.currency,
      at: event.eventCreatedAt,
    },
    earnedSoFarByOffer: Object.fromEntries(Object.entries(row.earned).map(([k, v]) => [k, fromDbMinor(v)])),
    redeemedSoFarByOffer: row.redeemed,
    now: event.eventCreatedAt,
    stacking: row.stacking ? stackingPolicy(row.stacking.stacking, row.stacking.stackCapBps) : undefined,
  });
  return { decision, offers };
}

/**
 * The cumulative offers the rules let the purchase count towards: each one's terms (its budget as
 * the purchase's period stands), the group's progress now, and whether the purchase counts already.
 */
async function progressFacts(
  tx: Tx,
  event: IngestedEvent,
  { decision, offers }: { decision: EarnDecision; offers: EarnOffer[] },
): Promise<ClaimProgress[]> {
  const ids = decision.cumulativeOfferIds;
  if (ids.length === 0) return [];
  const rows = await tx.$queryRaw<
    Array<{ offer_id: string; measure: bigint | null; rewarded: number | null; counted: boolean }>
  >`
    SELECT x.offer_id, p.measure, p.rewarded,
           EXISTS (SELECT 1 FROM offer_contribution c WHERE c.transaction_id = ${event.id} AND c.offer_id = x.offer_id) AS counted
      FROM unnest(${ids}::text[]) AS x(offer_id)
      LEFT JOIN offer_progress p ON p.offer_id = x.offer_id AND p.chg_id = ${event.chgId}`;
  return rows.map((r) => {
    return {
      terms: cumulativeTermsOf(offers.find((o) => o.id === r.offer_id)!),
      stored: { measure: r.measure === null ? 0 : fromDbMinor(r.measure), rewarded: r.rewarded ?? 0 },
      counted: r.counted,
    };
  });
}

/**
 * The merchant's offers as the settlement saw them: each budget as it recorded it, branded balance
 * the merchant cannot honour paid as cashback only, and a targeted offer's enrolment as the
 * settlement stored it (or as it would be decided).
 */
async function offersAsSettled(
  tx: Tx,
  event: IngestedEvent,
  merchantId: string,
  row: {
    offers: JsonOffer[];
    branded: { brandedEnabled: boolean; brandedAvailabilityDelayDays: number; brandedExpiryDays: number } | null;
    issuer_delay_days: number;
  },
  recordedBudgets: Record<string, BudgetState>,
) {
  const offers = await withEnrolments(
    tx,
    row.offers,
    row.offers.map((stored) => toEarnOffer(stored, event.eventCreatedAt)),
    { issuerId: event.issuerId, chgId: event.chgId, merchantId, at: event.eventCreatedAt, store: false },
  );
  const usable = row.branded !== null && brandedBalanceUsable(row.branded, row.issuer_delay_days);
  return offers.map((o) => withUsableBranded({ ...o, budget: recordedBudgets[o.id] ?? o.budget }, usable));
}
