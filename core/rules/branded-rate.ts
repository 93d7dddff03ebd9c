// The branded rate an offer really pays, the one rule that catalogue, eligibility and
// settlement all apply (docs/decisions/0013-effective-branded-rate.md): a merchant without branded balance cannot fund
// it, and balance that would become available only when it has already expired (the longer
// of the issuer's and the merchant's availability delays reaching the merchant's expiry) could
// never be spent. In both cases the offer earns cashback only and is shown with a branded rate
// of 0; nothing fails.
import type { CumulativeReward, RewardKind } from './reward-kinds';

export interface BrandedTerms {
  brandedEnabled: boolean;
  brandedAvailabilityDelayDays: number;
  brandedExpiryDays: number;
}

export function brandedBalanceUsable(merchant: BrandedTerms, issuerDelayDays: number): boolean {
  return (
    merchant.brandedEnabled &&
    Math.max(issuerDelayDays, merchant.brandedAvailabilityDelayDays) < merchant.brandedExpiryDays
  );
}

export function effectiveBrandedRateBps(offerRateBps: number, merchant: BrandedTerms, issuerDelayDays: number): number {
  return brandedBalanceUsable(merchant, issuerDelayDays) ? offerRateBps : 0;
}

/**
 * The offer as it really pays: its flat branded rate and every tier's at 0 where the balance
 * could not be used, and a cumulative offer paying branded balance pays 0 per completion;
 * untouched otherwise.
 */
export function withUsableBranded<
  T extends {
    brandedRateBps: number;
    tiers?: Array<{ brandedRateBps: number }> | null;
    cumulative?: CumulativeReward | null;
  },
>(offer: T, usable: boolean): T {
  if (usable) return offer;
  const tiers = offer.tiers?.map((t) => ({ ...t, brandedRateBps: 0 }));
  const cumulative = offer.cumulative && unusableCumulative(offer.cumulative);
  return { ...offer, brandedRateBps: 0, ...(tiers ? { tiers } : {}), ...(cumulative ? { cumulative } : {}) } as T;
}

/** A cumulative reward whose branded balance could not be used: its completions count, and pay 0. */
function unusableCumulative(reward: CumulativeReward): CumulativeReward {
  if (reward.balanceType !== 'branded') return reward;
  if (reward.kind === 'spend_x_get_y') return { ...reward, rewardMinor: 0 };
  return reward.rewardMinor !== undefined ? { ...reward, rewardMinor: 0 } : { ...reward, rateBps: 0 };
}

/** A reward as it really pays, for showing it: the same rule as withUsableBranded. */
export function usableReward(reward: RewardKind, usable: boolean): RewardKind {
  if (usable) return reward;
  if (reward.kind === 'percent') return { ...reward, brandedRateBps: 0 };
  if (reward.kind === 'tiered') return { ...reward, tiers: reward.tiers.map((t) => ({ ...t, brandedRateBps: 0 })) };
  return unusableCumulative(reward);
}
