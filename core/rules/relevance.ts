// How relevant an offer is to a group (API.md, Offer mechanics, Ranked lists; decision 0053): the
// reward the offer would give the group's typical purchase at its merchant, weighted by how often
// and how recently the group bought there, and in the merchant's category elsewhere. Integers
// throughout: the figure is minor units of reward, scaled by a weight in thousandths, so an issuer's
// engineer can recompute any offer's `relevance` from the group's history by hand.
import { tierOf, type Tier } from './reward-kinds';

/** The group's settled purchases at one merchant (chg_merchant_history). */
export interface MerchantHistory {
  merchantId: string;
  category: string;
  purchases: number;
  spendMinor: number;
  lastPurchaseAt: Date;
}

/** What the formula reads of an offer, as the group is paid it (branded-rate.ts, withUsableBranded). */
export interface RankedOffer {
  merchantId: string;
  category: string;
  minSpendMinor: number;
  cashbackRateBps: number;
  brandedRateBps: number;
  /** A tiered offer's tiers: the typical purchase's tier pays. */
  tiers: readonly Tier[] | null;
  /** The cap on one purchase's reward (null: none). */
  maxRewardMinor: number | null;
}

/** Where an offer is sold: what the group's habits are read by (merchant null: one it never bought at). */
interface OfferPlace {
  merchantId: string | null;
  category: string;
}

const habitAt = (habits: GroupHabits, merchantId: string | null) =>
  merchantId === null ? undefined : habits.byMerchant.get(merchantId);

export const RELEVANCE = {
  /** A group with no purchase at the merchant or in its category: a purchase of this size, or the offer's minimum. */
  defaultPurchaseMinor: 2_500,
  /** Purchases beyond this many say nothing more about a group's habit. */
  frequencyCap: 10,
  /** A purchase this many days old counts half as much as one today. */
  halfLifeDays: 30,
  /** Weights in thousandths: the base, the merchant's affinity at full strength, the category's. */
  baseWeight: 1_000,
  merchantWeight: 2_000,
  categoryWeight: 1_000,
} as const;

const DAY_MS = 24 * 60 * 60 * 1000;

/** What the group's history says at one merchant and, elsewhere, in its category. */
export interface Habit {
  purchases: number;
  spendMinor: number;
  /** Whole days since the latest purchase; null with no purchase. */
  daysSince: number | null;
}

/** The group's history by merchant, and each category's merchants, once per list. */
export interface GroupHabits {
  byMerchant: Map<string, Habit>;
  byCategory: Map<string, Array<Habit & { merchantId: string }>>;
}

export function habitsOf(history: readonly MerchantHistory[], now: Date): GroupHabits {
  const byMerchant = new Map<string, Habit>();
  const byCategory = new Map<string, Array<Habit & { merchantId: string }>>();
  for (const h of history) {
    const daysSince = Math.max(0, Math.floor((now.getTime() - h.lastPurchaseAt.getTime()) / DAY_MS));
    const habit = { purchases: h.purchases, spendMinor: h.spendMinor, daysSince };
    byMerchant.set(h.merchantId, habit);
    const merchants = byCategory.get(h.category) ?? [];
    merchants.push({ ...habit, merchantId: h.merchantId });
    byCategory.set(h.category, merchants);
  }
  return { byMerchant, byCategory };
}

/**
 * The instants, from `fromMs` up to (not at) `untilMs`, at which habitsOf(history, ·) reads the
 * same habits as at `now`: those at which every merchant's whole days since its latest purchase
 * stay as they are now. A ranking worked out at `now` holds over them.
 */
export function habitsSpanOf(history: readonly MerchantHistory[], now: Date): { fromMs: number; untilMs: number } {
  let fromMs = -Infinity;
  let untilMs = Infinity;
  for (const h of history) {
    const last = h.lastPurchaseAt.getTime();
    const days = Math.floor((now.getTime() - last) / DAY_MS);
    // Before its first whole day has passed (a purchase later than now too) a merchant reads 0 days.
    if (days > 0) fromMs = Math.max(fromMs, last + days * DAY_MS);
    untilMs = Math.min(untilMs, last + (Math.max(0, days) + 1) * DAY_MS);
  }
  return { fromMs, untilMs };
}

const NO_HABIT: Habit = { purchases: 0, spendMinor: 0, daysSince: null };

/** The group's purchases in the offer's category at merchants other than the offer's, together. */
function elsewhereInCategory(habits: GroupHabits, offer: OfferPlace): Habit {
  let sum = NO_HABIT;
  for (const h of habits.byCategory.get(offer.category) ?? [])
    if (h.merchantId !== offer.merchantId)
      sum = {
        purchases: sum.purchases + h.purchases,
        spendMinor: sum.spendMinor + h.spendMinor,
        daysSince: sum.daysSince === null ? h.daysSince : Math.min(sum.daysSince, h.daysSince!),
      };
  return sum;
}

/** The group's typical purchase at the offer's merchant: its mean there, else in the category, else a default. */
export function typicalPurchaseMinor(offer: RankedOffer, habits: GroupHabits): number {
  const here = habits.byMerchant.get(offer.merchantId);
  if (here && here.purchases > 0) return Math.floor(here.spendMinor / here.purchases);
  const category = elsewhereInCategory(habits, offer);
  if (category.purchases > 0) return Math.floor(category.spendMinor / category.purchases);
  return Math.max(RELEVANCE.defaultPurchaseMinor, offer.minSpendMinor);
}

/** What the offer gives one purchase of `amountMinor`: its tier's (or flat) rates on it, within its cap. */
export function rewardOnMinor(offer: RankedOffer, amountMinor: number): number {
  const minimum = offer.tiers
    ? Math.max(offer.minSpendMinor, Math.min(...offer.tiers.map((t) => t.minSpendMinor)))
    : offer.minSpendMinor;
  if (amountMinor < minimum) return 0;
  const tier = offer.tiers ? tierOf(offer.tiers, amountMinor) : null;
  const { cashbackRateBps: cashbackBps, brandedRateBps: brandedBps } = tier ?? offer;
  const reward = Math.floor((amountMinor * cashbackBps) / 10_000) + Math.floor((amountMinor * brandedBps) / 10_000);
  return offer.maxRewardMinor === null ? reward : Math.min(reward, offer.maxRewardMinor);
}

/** How strongly a habit pulls, in thousandths: up to 1,000 for frequencyCap purchases today. */
export function affinityOf(habit: Habit): number {
  if (habit.purchases <= 0 || habit.daysSince === null) return 0;
  const frequency = Math.min(habit.purchases, RELEVANCE.frequencyCap) / RELEVANCE.frequencyCap;
  const recency = Math.pow(0.5, habit.daysSince / RELEVANCE.halfLifeDays);
  return Math.floor(1_000 * frequency * recency);
}

/** The weight of an offer for the group, in thousandths: 1,000 with no history, up to 4,000. */
export function weightOf(offer: OfferPlace, habits: GroupHabits): number {
  const merchant = affinityOf(habitAt(habits, offer.merchantId) ?? NO_HABIT);
  const category = affinityOf(elsewhereInCategory(habits, offer));
  return (
    RELEVANCE.baseWeight +
    Math.floor((RELEVANCE.merchantWeight * merchant) / 1_000) +
    Math.floor((RELEVANCE.categoryWeight * category) / 1_000)
  );
}

/** relevance = floor(reward on the typical purchase x weight / 1,000). */
export function relevanceOf(offer: RankedOffer, habits: GroupHabits): number {
  const reward = rewardOnMinor(offer, typicalPurchaseMinor(offer, habits));
  return Math.floor((reward * weightOf(offer, habits)) / 1_000);
}

/**
 * What the group's history says of every offer at one merchant: the typical purchase (null: none
 * there or in the category, so the offer's own default) and the weight. The same figures as
 * typicalPurchaseMinor and weightOf, read once per merchant when a list ranks many of its offers.
 */
export interface MerchantPull {
  typicalMinor: number | null;
  weight: number;
}

/** The pull at a merchant the group never bought at: its category's elsewhere, the same for each such merchant. */
export function categoryPullOf(category: string, habits: GroupHabits): MerchantPull {
  return merchantPullOf(null, category, habits);
}

export function merchantPullOf(merchantId: string | null, category: string, habits: GroupHabits): MerchantPull {
  const probe = { merchantId, category };
  const here = habitAt(habits, merchantId);
  const elsewhere = elsewhereInCategory(habits, probe);
  const typicalMinor =
    here && here.purchases > 0
      ? Math.floor(here.spendMinor / here.purchases)
      : elsewhere.purchases > 0
        ? Math.floor(elsewhere.spendMinor / elsewhere.purchases)
        : null;
  return { typicalMinor, weight: weightOf(probe, habits) };
}

/** relevanceOf, with the offer's merchant's pull already read. */
export function relevanceWithPull(offer: RankedOffer, pull: MerchantPull): number {
  const typical = pull.typicalMinor ?? Math.max(RELEVANCE.defaultPurchaseMinor, offer.minSpendMinor);
  return Math.floor((rewardOnMinor(offer, typical) * pull.weight) / 1_000);
}
