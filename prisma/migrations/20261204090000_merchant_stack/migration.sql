-- A merchant's third stacking policy (API.md, Offer mechanics, Stacking): `stack`, every qualifying
-- offer applied under its own caps, their sum capped at `stack_cap_bps` of the purchase's amount.
-- The cap is required with the policy, so that no merchant stacks without a ceiling. The merchant
-- table is small (the catalogue): the constraints are checked in place.
ALTER TABLE "merchant" ADD COLUMN "stack_cap_bps" INTEGER;
ALTER TABLE "merchant" DROP CONSTRAINT "merchant_stacking";
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_stacking" CHECK ("stacking" IN ('best_of', 'priority', 'stack'));
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_stack_cap_bps" CHECK ("stack_cap_bps" BETWEEN 0 AND 10000);
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_stack_has_cap" CHECK ("stacking" <> 'stack' OR "stack_cap_bps" IS NOT NULL);
