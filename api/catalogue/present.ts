// Stored catalogue rows → the shapes of API.md. BIGINT money is checked to be a safe
// integer before it becomes a JSON number.
import type { Audience } from '../../core/rules/audience';
import type { Activation, Merchant, Offer } from '../../prisma/generated/client';
import { fromDbMinor } from '../../core/ledger';
import { brandedBalanceUsable, usableReward } from '../../core/rules/branded-rate';
import {
  isCumulative,
  progressOf,
  type Progress,
  type RewardKind,
  type StoredReward,
} from '../../core/rules/reward-kinds';
import type { MerchantStacking } from '../../core/rules/stacking';
import { offerStatusAt, type CatalogueStatus } from '../../core/rules/offer-status';
import { budgetState, type BudgetPeriod } from '../../core/rules/budget';

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const nullableMinor = (v: bigint | null): number | null => (v === null ? null : fromDbMinor(v));

/**
 * Prisma cannot write or read NULL in a list column: it reads NULL as []. Our writes never
 * store an empty list (the schemas require minItems 1), so [] read back means NULL.
 */
export function nullableList(list: string[]): string[] | null {
  return list.length === 0 ? null : list;
}

function brandedBalance(m: Merchant) {
  return {
    enabled: m.brandedEnabled,
    spendMinimumMinor: fromDbMinor(m.brandedSpendMinimumMinor),
    availabilityDelayDays: m.brandedAvailabilityDelayDays,
    expiryDays: m.brandedExpiryDays,
  };
}

export function presentActivationSummary(activation: Activation | null | undefined) {
  if (!activation) return { status: 'not_activated', activatedAt: null, presentedOfferId: null };
  return {
    status: activation.status,
    activatedAt: iso(activation.activatedAt),
    presentedOfferId: activation.presentedOfferId,
  };
}

/** The merchant as an issuer sees it under one group. */
export function presentMerchant(m: Merchant, activation: Activation | null | undefined) {
  return {
    id: m.id,
    name: m.name,
    category: m.category,
    status: m.status,
    logoUrl: m.logoUrl,
    websiteUrl: m.websiteUrl,
    brandedBalance: brandedBalance(m),
    stacking: m.stacking as MerchantStacking,
    stackCapBps: m.stackCapBps,
    activation: presentActivationSummary(activation),
  };
}

/** The merchant as the operator manages it. */
export function presentAdminMerchant(m: Merchant) {
  return {
    id: m.id,
    name: m.name,
    category: m.category,
    status: m.status,
    logoUrl: m.logoUrl,
    websiteUrl: m.websiteUrl,
    issuerIds: nullableList(m.issuerIds),
    brandedBalance: brandedBalance(m),
    stacking: m.stacking as MerchantStacking,
    stackCapBps: m.stackCapBps,
    matchRules: {
      descriptorPatterns: m.matchDescriptorPatterns,
      acquirerMerchantIds: m.matchAcquirerMerchantIds,
      mccs: m.matchMccs,
    },
    createdAt: m.createdAt.toISOString(),
    updatedAt: m.updatedAt.toISOString(),
  };
}

/** What an offer's presentation reads of its row. */
export type PresentedOffer = Pick<
  Offer,
  | 'id'
  | 'merchantId'
  | 'title'
  | 'description'
  | 'cashbackRateBps'
  | 'brandedRateBps'
  | 'minSpendMinor'
  | 'maxRewardMinor'
  | 'maxRewardPerChgMinor'
  | 'maxRedemptionsPerChg'
  | 'mccs'
  | 'startsAt'
  | 'endsAt'
  | 'returnPeriodDays'
  | 'budgetMinor'
  | 'budgetPeriod'
  | 'fundingIssuerShareBps'
  | 'activation'
  | 'audience'
  | 'holdoutBps'
  | 'reward'
  | 'priority'
  | 'status'
>;

export function presentOffer(o: PresentedOffer, now: Date) {
  return {
    id: o.id,
    merchantId: o.merchantId,
    title: o.title,
    description: o.description,
    cashbackRateBps: o.cashbackRateBps,
    brandedRateBps: o.brandedRateBps,
    minSpendMinor: fromDbMinor(o.minSpendMinor),
    maxRewardMinor: nullableMinor(o.maxRewardMinor),
    maxRewardPerChgMinor: nullableMinor(o.maxRewardPerChgMinor),
    maxRedemptionsPerChg: o.maxRedemptionsPerChg,
    mccs: nullableList(o.mccs),
    startsAt: o.startsAt.toISOString(),
    endsAt: iso(o.endsAt),
    returnPeriodDays: o.returnPeriodDays,
    budgetMinor: nullableMinor(o.budgetMinor),
    budgetPeriod: o.budgetPeriod as BudgetPeriod,
    funding: { issuerShareBps: o.fundingIssuerShareBps },
    activation: o.activation as 'opt_in' | 'auto',
    audience: (o.audience ?? null) as Audience | null,
    holdoutBps: o.holdoutBps,
    reward: rewardOf(o),
    priority: o.priority,
    status: offerStatusAt(toWindow(o), now),
  };
}

/** The reward kind in full: a percent offer's from its flat rates, any other as stored. */
function rewardOf(o: PresentedOffer): RewardKind {
  const stored = o.reward as StoredReward | null;
  return stored ?? { kind: 'percent', cashbackRateBps: o.cashbackRateBps, brandedRateBps: o.brandedRateBps };
}

/**
 * What the offer's budget has given in the period `now` falls in (its current month, or its life):
 * `usedMinor` as read from offer_budget for that period (api/catalogue/store.ts, budgetUsedOf).
 */
export function presentBudgetUse(o: Offer, usedMinor: number, now: Date) {
  if (o.budgetMinor === null) return null;
  const state = budgetState(fromDbMinor(o.budgetMinor), usedMinor, o.budgetPeriod as BudgetPeriod, now);
  return {
    limitMinor: state.limitMinor,
    usedMinor: state.usedMinor,
    remainingMinor: state.remainingMinor,
    period: state.period === null ? 'lifetime' : state.periodKey,
  };
}

/**
 * The offer as the operator manages it, with its commission and what its budget has given in the
 * period `budgetAt` falls in (now unless the operator asked for another month).
 */
export function presentAdminOffer(o: Offer, now: Date, budgetUsedMinor: number, budgetAt: Date = now) {
  return {
    ...presentOffer(o, now),
    commission: { rateBps: o.commissionRateBps, flatMinor: fromDbMinor(o.commissionFlatMinor) },
    budget: presentBudgetUse(o, budgetUsedMinor, budgetAt),
    catalogueStatus: o.status,
    createdAt: o.createdAt.toISOString(),
    updatedAt: o.updatedAt.toISOString(),
  };
}

function toWindow(o: PresentedOffer) {
  return { startsAt: o.startsAt, endsAt: o.endsAt, catalogueStatus: o.status as CatalogueStatus };
}

/** The merchant fields an issuer's view of an offer depends on. */
export type OfferMerchant = Pick<
  Merchant,
  'status' | 'brandedEnabled' | 'brandedAvailabilityDelayDays' | 'brandedExpiryDays'
>;

/** The status an issuer sees: an offer is live only while its merchant is active too. */
export function issuerOfferStatus(o: PresentedOffer & { merchant: OfferMerchant }, now: Date) {
  const catalogueStatus = o.status === 'active' && o.merchant.status === 'active' ? 'active' : 'inactive';
  return offerStatusAt({ ...toWindow(o), catalogueStatus }, now);
}

/**
 * An offer as an issuer sees it: live only while its merchant is active too, and with the
 * branded rate it really pays there (core/rules/branded-rate.ts), as eligibility estimates
 * and settlement pays. The operator's view (presentAdminOffer) shows the catalogue as set.
 */
export function presentIssuerOffer(
  o: PresentedOffer & { merchant: OfferMerchant },
  group: { issuerDelayDays: number; merchantActivated: boolean },
  now: Date,
) {
  const usable = brandedBalanceUsable(o.merchant, group.issuerDelayDays);
  const presented = presentOffer(o, now);
  return {
    ...presented,
    brandedRateBps: usable ? o.brandedRateBps : 0,
    reward: usableReward(presented.reward, usable),
    status: issuerOfferStatus(o, now),
    // An auto offer needs no activation: there is nothing to say.
    activated: o.activation === 'opt_in' ? group.merchantActivated : null,
  };
}

/** A group's progress on a cumulative offer, from its measure (none yet: 0); null for other kinds. */
export function groupProgressOf(
  o: Pick<PresentedOffer, 'reward' | 'maxRedemptionsPerChg'>,
  measure: number | undefined,
): Progress | null {
  const stored = o.reward as StoredReward | null;
  if (!stored || !isCumulative(stored)) return null;
  return progressOf(stored, measure ?? 0, o.maxRedemptionsPerChg);
}
