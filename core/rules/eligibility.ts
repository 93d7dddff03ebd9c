// Earn eligibility of one merchant for one group (API.md, Merchants ... eligibility and
// Reward rules). Pure: the caller loads the merchant, its offers, the activation and the
// group state. The per-offer conditions are complete on purpose: the transaction workflow
// records them as the transaction's match trace.
import { offerStatusAt, type CatalogueStatus } from './offer-status';
import { computeOfferReward, type OfferReward, type RewardTerms } from './reward';
import { assertMinor } from '../money';
import type { BudgetState } from './budget';
import { lowestTierMinor, ratesFor, type CumulativeReward, type Tier } from './reward-kinds';
import { stackOffers, type StackingPolicy, type StackOutcome } from './stacking';

export const EARN_REASONS = [
  'merchant_not_activated',
  'no_active_offer',
  'chg_inactive',
  'merchant_inactive',
  'below_min_spend',
  'mcc_excluded',
  'offer_cap_reached',
  'redemption_limit_reached',
  'offer_budget_exhausted',
  'not_in_audience',
  'holdout',
] as const;
export type EarnReason = (typeof EARN_REASONS)[number];
export const REWARD_CURRENCY = 'usd';

export interface EarnOffer extends RewardTerms {
  id: string;
  startsAt: Date;
  endsAt: Date | null;
  catalogueStatus: CatalogueStatus;
  minSpendMinor: number;
  /** null: every MCC qualifies. */
  mccs: string[] | null;
  /** The offer's budget for the period of the instant evaluated; null or absent: no budget. */
  budget?: BudgetState | null;
  /** opt_in (or absent): the group must have activated the merchant; auto: the audience qualifies without. */
  activation?: 'opt_in' | 'auto';
  /** A targeted offer's enrolment of the group (absent: an untargeted offer; null: not enrolled, for
   *  an offer not started when the group was evaluated). */
  enrolment?: Targeting | null;
  /** A tiered offer's tiers (absent or null: its flat rates pay every purchase). */
  tiers?: Tier[] | null;
  /** Under the merchant's priority stacking, the highest wins (absent: 0). */
  priority?: number;
  /** How many purchases of a group may keep a reward from the offer (absent or null: no limit);
   *  of a cumulative offer, how many completions. */
  maxRedemptionsPerChg?: number | null;
  /** A cumulative offer's reward (spend X get Y, Nth purchase): a qualifying purchase moves the
   *  group's progress instead of earning on its own (core/rules/progress.ts). Absent or null: none. */
  cumulative?: CumulativeReward | null;
}

/** What eligibility reads of a group's enrolment in a targeted offer (core/domain/enrolment.ts). */
export interface Targeting {
  inAudience: boolean;
  arm: 'treated' | 'control' | null;
  detail: string;
}

export interface EarnTransaction {
  amountMinor: number;
  /** What the reward is computed on: the amount left after branded spend (API.md, Reward rules),
   *  as the settlement recorded it. The whole amount when absent. The offer still qualifies
   *  (min spend) on the whole amount: however it was paid, the purchase was made. */
  eligibleAmountMinor?: number;
  /** Absent in an eligibility preview without an MCC; then MCC rules are not checked. */
  mcc?: string;
  currency: string;
  at: Date;
}

export interface EarnInput {
  merchant: { id: string; status: CatalogueStatus };
  offers: EarnOffer[];
  activation: { status: CatalogueStatus; activatedAt: Date } | null;
  groupStatus: CatalogueStatus;
  cardholderStatus?: CatalogueStatus;
  cardStatus?: CatalogueStatus;
  transaction?: EarnTransaction;
  /** Reward already earned by the group per offer id, for per-group caps. */
  earnedSoFarByOffer?: Record<string, number>;
  /** The group's purchases that keep a reward from each offer (those with a redemption limit). */
  redeemedSoFarByOffer?: Record<string, number>;
  /** The instant to evaluate at when there is no transaction. */
  now: Date;
  /** The merchant's: how its qualifying offers combine (absent: best_of). */
  stacking?: StackingPolicy;
}

export interface Condition {
  name: string;
  passed: boolean;
  detail: string;
}

export interface OfferEvaluation {
  offerId: string;
  eligible: boolean;
  conditions: Condition[];
  reward?: OfferReward;
}

export interface EarnDecision {
  eligible: boolean;
  at: Date;
  reasons: EarnReason[];
  eligibleOfferIds: string[];
  /** The cumulative offers among them: the purchase counts towards each, outside stacking. */
  cumulativeOfferIds: string[];
  winningOfferId?: string;
  estimatedRewardMinor?: number;
  /** With a transaction: each qualifying offer, what it gives and why it applied or not. */
  stacking?: StackOutcome[];
  offers: OfferEvaluation[];
}

// Which reason a failed condition stands for. Conditions without a reason (currency)
// cannot fail for a previewed transaction; ingestion ends non-usd ones not_matched.
const REASON_OF: Record<string, EarnReason | undefined> = {
  activation_before_transaction: 'merchant_not_activated',
  offer_window: 'no_active_offer',
  merchant_active: 'merchant_inactive',
  chg_active: 'chg_inactive',
  cardholder_active: 'chg_inactive',
  card_active: 'chg_inactive',
  min_spend: 'below_min_spend',
  mcc_allowed: 'mcc_excluded',
  cap_not_exhausted: 'offer_cap_reached',
  redemptions_left: 'redemption_limit_reached',
  budget_not_exhausted: 'offer_budget_exhausted',
  in_audience: 'not_in_audience',
  treated: 'holdout',
};

export function evaluateEarn(input: EarnInput): EarnDecision {
  const tx = input.transaction;
  if (tx) assertMinor(tx.amountMinor, 'transaction.amountMinor');
  if (tx?.eligibleAmountMinor !== undefined) {
    assertMinor(tx.eligibleAmountMinor, 'transaction.eligibleAmountMinor');
    if (tx.eligibleAmountMinor > tx.amountMinor)
      throw new RangeError('transaction.eligibleAmountMinor exceeds transaction.amountMinor');
  }
  const at = tx?.at ?? input.now;
  const shared = sharedConditions(input, at);
  const offers = input.offers.map((offer) => evaluateOffer(offer, shared, input, at));
  const qualifying = offers.filter((o) => o.eligible);
  const cumulative = new Set(input.offers.filter((o) => o.cumulative).map((o) => o.id));
  const decision: EarnDecision = {
    eligible: qualifying.length > 0,
    at,
    reasons: [],
    eligibleOfferIds: qualifying.map((o) => o.offerId),
    cumulativeOfferIds: qualifying.filter((o) => cumulative.has(o.offerId)).map((o) => o.offerId),
    offers,
  };
  if (decision.eligible) {
    // A cumulative offer rewards a completion, not the purchase: it does not stack with the others.
    const perPurchase = qualifying.filter((o) => !cumulative.has(o.offerId));
    if (tx && perPurchase.length > 0) {
      const stacking = combineOffers(
        perPurchase.map((o) => ({ offerId: o.offerId, reward: o.reward! })),
        input.offers,
        input.stacking ?? BEST_OF,
        tx.eligibleAmountMinor ?? tx.amountMinor,
      );
      decision.winningOfferId = stacking[0].offerId;
      // Under stack every applied offer adds its part; under the others only the first gives anything.
      decision.estimatedRewardMinor = stacking.reduce((sum, o) => sum + o.appliedMinor, 0);
      decision.stacking = stacking;
    }
    return decision;
  }
  decision.reasons = reasonsFor(shared, offers, input.offers);
  return decision;
}

/** Conditions that do not depend on the offer: activation, group, cardholder, card, merchant. */
function sharedConditions(input: EarnInput, at: Date): Condition[] {
  const { activation } = input;
  const conditions: Condition[] = [];
  if (!activation) {
    conditions.push({
      name: 'activation_before_transaction',
      passed: false,
      detail: 'the merchant was never activated for the group',
    });
  } else if (activation.status !== 'active') {
    conditions.push({ name: 'activation_before_transaction', passed: false, detail: 'the activation was deactivated' });
  } else {
    const passed = activation.activatedAt.getTime() <= at.getTime();
    conditions.push({
      name: 'activation_before_transaction',
      passed,
      detail: `activated at ${activation.activatedAt.toISOString()}, evaluated at ${at.toISOString()}`,
    });
  }
  conditions.push({
    name: 'chg_active',
    passed: input.groupStatus === 'active',
    detail: `group is ${input.groupStatus}`,
  });
  if (input.cardholderStatus)
    conditions.push({
      name: 'cardholder_active',
      passed: input.cardholderStatus === 'active',
      detail: `cardholder is ${input.cardholderStatus}`,
    });
  if (input.cardStatus)
    conditions.push({
      name: 'card_active',
      passed: input.cardStatus === 'active',
      detail: `card is ${input.cardStatus}`,
    });
  conditions.push({
    name: 'merchant_active',
    passed: input.merchant.status === 'active',
    detail: `merchant is ${input.merchant.status}`,
  });
  return conditions;
}

/**
 * A redemption is a purchase that keeps a reward from the offer: one refunded in full gives its
 * place back, as it gives its reward back.
 */
function redemptionCondition(limit: number, redeemed: number): Condition {
  return {
    name: 'redemptions_left',
    passed: redeemed < limit,
    detail: `${redeemed} of ${limit} redemptions per group used`,
  };
}

function evaluateOffer(offer: EarnOffer, shared: Condition[], input: EarnInput, at: Date): OfferEvaluation {
  const tx = input.transaction;
  const earnedSoFar = input.earnedSoFarByOffer?.[offer.id] ?? 0;
  const status = offerStatusAt(offer, at);
  const conditions = [
    // An auto offer qualifies its audience without an activation of the merchant.
    ...(offer.activation === 'auto' ? shared.filter((c) => c.name !== ACTIVATION) : shared),
    { name: 'offer_window', passed: status === 'active', detail: `offer is ${status} at ${at.toISOString()}` },
    ...(offer.enrolment === undefined ? [] : targetingConditions(offer.enrolment)),
  ];
  if (tx) {
    conditions.push(minSpendCondition(offer, tx.amountMinor));
    conditions.push(mccCondition(offer, tx.mcc));
    conditions.push({
      name: 'currency_usd',
      passed: tx.currency === REWARD_CURRENCY,
      detail: `currency ${tx.currency}`,
    });
  }
  // A cumulative offer's limits are on its completions (core/rules/progress.ts): a purchase past
  // them still counts towards the progress the group sees.
  if (offer.cumulative) return { offerId: offer.id, eligible: conditions.every((c) => c.passed), conditions };
  const capLeft = offer.maxRewardPerChgMinor === null ? null : offer.maxRewardPerChgMinor - earnedSoFar;
  conditions.push({
    name: 'cap_not_exhausted',
    passed: capLeft === null || capLeft > 0,
    detail:
      capLeft === null
        ? 'no per-group cap'
        : `earned ${earnedSoFar} of the per-group cap ${offer.maxRewardPerChgMinor}`,
  });
  const limit = offer.maxRedemptionsPerChg ?? null;
  if (limit !== null) conditions.push(redemptionCondition(limit, input.redeemedSoFarByOffer?.[offer.id] ?? 0));
  if (offer.budget) conditions.push(budgetCondition(offer.budget));
  const eligible = conditions.every((c) => c.passed);
  const evaluation: OfferEvaluation = { offerId: offer.id, eligible, conditions };
  if (eligible && tx)
    evaluation.reward = computeOfferReward(
      termsAt(offer, tx.amountMinor)!,
      tx.eligibleAmountMinor ?? tx.amountMinor,
      earnedSoFar,
      offer.budget?.remainingMinor ?? null,
    );
  return evaluation;
}

const ACTIVATION = 'activation_before_transaction';

/** The least a purchase must reach to earn from the offer: its minimum spend, or its lowest tier's if higher. */
export function minimumOf(offer: Pick<EarnOffer, 'minSpendMinor' | 'tiers'>): number {
  return offer.tiers ? Math.max(offer.minSpendMinor, lowestTierMinor(offer.tiers)) : offer.minSpendMinor;
}

/**
 * The terms a purchase of `purchaseAmountMinor` earns at: the flat rates, or the rates of the tier
 * the whole purchase reaches (however it was paid, as the minimum spend). Null below every tier.
 */
export function termsAt(offer: EarnOffer, purchaseAmountMinor: number): EarnOffer | null {
  if (!offer.tiers) return offer;
  const rates = ratesFor({ kind: 'tiered', tiers: offer.tiers }, purchaseAmountMinor);
  return rates && { ...offer, ...rates };
}

/**
 * A targeted offer: the group must be in its audience, and in the treated arm. A control group's
 * purchase is matched and recorded, and earns nothing from the offer: that is what the lift
 * report compares.
 */
function targetingConditions(enrolment: Targeting | null): Condition[] {
  if (enrolment === null)
    return [{ name: 'in_audience', passed: false, detail: 'not enrolled: the offer had not started for the group' }];
  const conditions = [{ name: 'in_audience', passed: enrolment.inAudience, detail: enrolment.detail }];
  if (enrolment.inAudience)
    conditions.push({ name: 'treated', passed: enrolment.arm === 'treated', detail: `arm ${enrolment.arm}` });
  return conditions;
}

function minSpendCondition(offer: EarnOffer, amountMinor: number): Condition {
  const minimum = minimumOf(offer);
  const tier = offer.tiers ? termsAt(offer, amountMinor) : null;
  const detail = !offer.tiers
    ? `amount ${amountMinor} vs minimum ${minimum}`
    : tier
      ? `amount ${amountMinor} reaches the tier paying ${tier.cashbackRateBps} bps cashback and ${tier.brandedRateBps} bps branded`
      : `amount ${amountMinor} vs minimum ${minimum} (the lowest tier's or the offer's)`;
  return { name: 'min_spend', passed: amountMinor >= minimum, detail };
}

/** An offer whose budget for the period is spent no longer qualifies (a purchase at the edge gets what is left). */
function budgetCondition(budget: BudgetState): Condition {
  const period = budget.period === 'month' ? `the budget of ${budget.periodKey}` : 'the lifetime budget';
  return {
    name: 'budget_not_exhausted',
    passed: budget.remainingMinor > 0,
    detail: `${budget.usedMinor} of ${period} of ${budget.limitMinor} used, ${budget.remainingMinor} left`,
  };
}

function mccCondition(offer: EarnOffer, mcc: string | undefined): Condition {
  if (offer.mccs === null) return { name: 'mcc_allowed', passed: true, detail: 'offer has no MCC restriction' };
  if (mcc === undefined)
    return {
      name: 'mcc_allowed',
      passed: true,
      detail: `not checked: no MCC given (offer allows ${offer.mccs.join(', ')})`,
    };
  return {
    name: 'mcc_allowed',
    passed: offer.mccs.includes(mcc),
    detail: `MCC ${mcc}; offer allows ${offer.mccs.join(', ')}`,
  };
}

const BEST_OF: StackingPolicy = { policy: 'best_of' };

/**
 * The qualifying offers combined by the merchant's policy (core/rules/stacking.ts), the one that
 * applies first. Eligibility's estimate and settlement's reward both decide here.
 */
export function combineOffers(
  qualifying: ReadonlyArray<{ offerId: string; reward: { totalMinor: number } }>,
  offers: readonly EarnOffer[],
  stacking: StackingPolicy,
  amountMinor: number,
): StackOutcome[] {
  const byId = new Map(offers.map((o) => [o.id, o]));
  const candidates = qualifying.map((q) => ({
    offerId: q.offerId,
    rewardMinor: q.reward.totalMinor,
    priority: byId.get(q.offerId)!.priority ?? 0,
    startsAt: byId.get(q.offerId)!.startsAt,
  }));
  return stackOffers(candidates, stacking, amountMinor);
}

/**
 * Shared failures always count. Offer-level failures (min spend, MCC, cap) only count for
 * offers whose window is open: a scheduled offer failing min spend is not why the
 * transaction did not earn. No offer in its window at all is no_active_offer.
 */
function reasonsFor(shared: Condition[], offers: OfferEvaluation[], terms: EarnOffer[]): EarnReason[] {
  const reasons = new Set<EarnReason>();
  // A missing activation is no reason when every offer of the merchant is an auto offer.
  const activationCounts = terms.length === 0 || terms.some((o) => o.activation !== 'auto');
  for (const c of shared)
    if (!c.passed && REASON_OF[c.name] && (c.name !== ACTIVATION || activationCounts)) reasons.add(REASON_OF[c.name]!);
  const open = offers.filter((o) => o.conditions.find((c) => c.name === 'offer_window')!.passed);
  if (terms.length === 0 || open.length === 0) reasons.add('no_active_offer');
  for (const offer of open) {
    for (const c of offer.conditions) {
      const reason = REASON_OF[c.name];
      if (!c.passed && reason && c.name !== 'offer_window') reasons.add(reason);
    }
  }
  return EARN_REASONS.filter((r) => reasons.has(r));
}
