// How an offer's reward, as an operator writes it, becomes the row's columns (API.md, Offer
// mechanics). A percent offer is its flat rates with `reward` NULL, as every offer was before
// kinds; any other kind is stored whole in `reward`, with its headline in the flat columns
// (core/rules/reward-kinds.ts, headlineRates; 0 for a cumulative kind, which pays no rate on a
// purchase). A body gives the reward one way: the flat rates (a percent reward) or `reward`; flat
// rates on another kind would silently turn it into another offer, so they are refused and the
// operator gives the whole reward.
import { errors } from '../../core/errors';
import { Prisma, type Offer } from '../../prisma/generated/client';
import { headlineRates, isCumulative, type StoredReward, type Tier } from '../../core/rules/reward-kinds';
import type { OfferInput } from './schemas';

export interface RewardColumns {
  cashbackRateBps?: number;
  brandedRateBps?: number;
  reward?: Prisma.InputJsonValue | typeof Prisma.DbNull;
}

export function rewardColumns(input: OfferInput, existing: Pick<Offer, 'reward'> | null): RewardColumns {
  const flat = input.cashbackRateBps !== undefined || input.brandedRateBps !== undefined;
  const reward = input.reward;
  if (reward && flat)
    throw errors.validation('invalid_body', 'Give the reward either as reward or as the flat rates, not both.', [
      { path: '/reward', message: 'must not be given with cashbackRateBps or brandedRateBps' },
    ]);
  if (reward?.kind === 'percent')
    return { cashbackRateBps: reward.cashbackRateBps, brandedRateBps: reward.brandedRateBps, reward: Prisma.DbNull };
  if (reward?.kind === 'tiered') {
    checkTiers(reward.tiers);
    const tiers = reward.tiers.map((t) => ({
      minSpendMinor: t.minSpendMinor,
      cashbackRateBps: t.cashbackRateBps,
      brandedRateBps: t.brandedRateBps,
    }));
    return { ...headlineRates(tiers), reward: { kind: 'tiered', tiers } };
  }
  if (reward?.kind === 'nth_purchase' && (reward.rewardMinor === undefined) === (reward.rateBps === undefined))
    throw errors.validation('invalid_body', 'An nth_purchase reward pays rewardMinor or rateBps: exactly one.', [
      { path: '/reward', message: 'must have exactly one of rewardMinor and rateBps' },
    ]);
  if (reward?.kind === 'spend_x_get_y' || reward?.kind === 'nth_purchase')
    return { cashbackRateBps: 0, brandedRateBps: 0, reward: { ...reward } };
  if (flat && existing?.reward)
    throw errors.validation('invalid_body', "The offer's reward is not a percent: give it whole as reward.", [
      {
        path: input.cashbackRateBps !== undefined ? '/cashbackRateBps' : '/brandedRateBps',
        message: `cannot be set alone on a ${(existing.reward as { kind: string }).kind} offer; give reward`,
      },
    ]);
  return { cashbackRateBps: input.cashbackRateBps, brandedRateBps: input.brandedRateBps };
}

/** What JSON schema cannot say of tiers: ascending minimums, and a rate in at least one of them. */
function checkTiers(tiers: readonly Tier[]): void {
  for (let i = 1; i < tiers.length; i++)
    if (tiers[i].minSpendMinor <= tiers[i - 1].minSpendMinor)
      throw errors.validation('invalid_body', "The tiers' minimums must ascend.", [
        { path: `/reward/tiers/${i}/minSpendMinor`, message: "must be above the previous tier's minSpendMinor" },
      ]);
  if (tiers.every((t) => t.cashbackRateBps === 0 && t.brandedRateBps === 0))
    throw errors.validation('invalid_body', 'A tiered offer needs a rate above 0 in some tier.', [
      { path: '/reward/tiers', message: 'every tier pays 0' },
    ]);
}

/** The offer's terms as they will be stored (the body over the stored row) that a cumulative kind reads. */
export interface MergedTerms {
  reward: { kind: string } | null;
  maxRewardPerChgMinor: bigint | null;
  budgetMinor: bigint | null;
  fundingIssuerShareBps: number;
  commissionRateBps: number;
  commissionFlatMinor: bigint;
}

/**
 * What a cumulative offer cannot have: a per-group cap on amounts (its limit is
 * maxRedemptionsPerChg, on completions), or a commission (charged on the amount a purchase is
 * rewarded on, and a completion's reward is not one purchase's). A budget and an issuer's share
 * apply to each completion's reward.
 */
export function checkCumulativeTerms(terms: MergedTerms): void {
  if (!terms.reward || !isCumulative(terms.reward as StoredReward)) return;
  const refused = [
    {
      path: '/maxRewardPerChgMinor',
      on: terms.maxRewardPerChgMinor !== null,
      message: 'a per-group cap on amounts (maxRedemptionsPerChg limits completions)',
    },
    {
      path: '/commission',
      on: terms.commissionRateBps > 0 || terms.commissionFlatMinor > 0n,
      message: 'a commission',
    },
  ].filter((r) => r.on);
  if (refused.length > 0)
    throw errors.validation(
      'invalid_body',
      `A ${terms.reward.kind} offer cannot have ${refused.map((r) => r.message).join(', ')}.`,
      refused.map((r) => ({ path: r.path, message: `not available on a ${terms.reward!.kind} offer` })),
    );
}
