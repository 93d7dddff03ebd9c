-- An offer's reward when it is not a flat percent (API.md, Offer mechanics): today a tiered
-- offer's tiers. NULL is a percent offer, whose rates are the flat columns as before; a tiered
-- offer keeps its headline (each component's highest tier rate) in the flat columns too, so
-- a reader of them alone never sees more than the offer pays. A nullable column without a
-- default: a catalogue change only, no rewrite of the table.
ALTER TABLE "offer" ADD COLUMN "reward" JSONB;
ALTER TABLE "offer" ADD CONSTRAINT "offer_reward_kind" CHECK ("reward" IS NULL OR "reward" ->> 'kind' = 'tiered');
