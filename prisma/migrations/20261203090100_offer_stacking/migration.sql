-- How the offers of one merchant that qualify for one purchase combine (API.md, Offer mechanics,
-- Stacking): the merchant's policy, best_of (the default: the offer giving the most, as every
-- purchase was decided before) or priority (the highest offer priority, ties to the most); and
-- each offer's priority. Columns with a constant default: PostgreSQL records the default without
-- rewriting either table.
ALTER TABLE "merchant" ADD COLUMN "stacking" TEXT NOT NULL DEFAULT 'best_of';
ALTER TABLE "merchant" ADD CONSTRAINT "merchant_stacking" CHECK ("stacking" IN ('best_of', 'priority'));
ALTER TABLE "offer" ADD COLUMN "priority" INTEGER NOT NULL DEFAULT 0;
