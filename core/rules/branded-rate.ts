// The branded rate an offer really pays, the one rule that catalogue, eligibility and
// settlement all apply (docs/decisions/0013-effective-branded-rate.md): a merchant without branded balance cannot fund
// it, and balance that would become available only when it has already expired (the longer
// of the issuer's and the merchant's availability delays reaching the merchant's expiry) could
// never be spent. In both cases the offer earns cashback only and is shown with a branded rate
// of 0; nothing fails.

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
