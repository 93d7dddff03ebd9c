-- How many rewards a group may earn from an offer (API.md, Offer mechanics; null: no limit). A
-- nullable column without a default is added without rewriting the table; the offer table is the
-- catalogue's, a few rows per merchant, so its CHECK is validated at once.
ALTER TABLE "offer" ADD COLUMN "max_redemptions_per_chg" INTEGER;
ALTER TABLE "offer" ADD CONSTRAINT "offer_max_redemptions_per_chg_check"
  CHECK ("max_redemptions_per_chg" IS NULL OR "max_redemptions_per_chg" >= 1);
