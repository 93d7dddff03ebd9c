-- Cumulative offers (API.md, Offer mechanics): spend X get Y and the Nth purchase. A group's
-- progress on such an offer is its measure (net qualifying spend in minor units, or its count of
-- qualifying purchases) and how many completions of it stand rewarded; each purchase's share of
-- the measure is kept so that its refunds take back exactly what it added. The rows move in the
-- same transaction as the rewards they account for (docs/decisions/0060-cumulative-offers.md).
ALTER TABLE "offer" DROP CONSTRAINT "offer_reward_kind";
ALTER TABLE "offer" ADD CONSTRAINT "offer_reward_kind"
  CHECK ("reward" IS NULL OR "reward" ->> 'kind' IN ('tiered', 'spend_x_get_y', 'nth_purchase'));

-- The completion a reward event earns or claws back (1 for the first); NULL for every other event.
-- A nullable column without a default: no rewrite of the table. reward_event is large: its CHECK is
-- added NOT VALID (an instant) and validated by the next migration, its index built concurrently
-- by the one after.
ALTER TABLE "reward_event" ADD COLUMN "completion" INTEGER;
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_completion_check"
  CHECK ("completion" IS NULL OR "completion" >= 1) NOT VALID;

CREATE TABLE "offer_progress" (
  "offer_id" TEXT NOT NULL REFERENCES "offer" ("id"),
  "chg_id" TEXT NOT NULL REFERENCES "cardholder_group" ("id"),
  "issuer_id" TEXT NOT NULL,
  "measure" BIGINT NOT NULL CHECK ("measure" >= 0),
  "rewarded" INTEGER NOT NULL CHECK ("rewarded" >= 0),
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY ("offer_id", "chg_id")
);
-- A group's offer list reads its progress on every offer it shows.
CREATE INDEX "offer_progress_chg_idx" ON "offer_progress" ("chg_id", "offer_id") INCLUDE ("measure", "rewarded");

CREATE TABLE "offer_contribution" (
  "transaction_id" TEXT NOT NULL REFERENCES "ingested_event" ("id"),
  "offer_id" TEXT NOT NULL REFERENCES "offer" ("id"),
  "issuer_id" TEXT NOT NULL,
  "chg_id" TEXT NOT NULL,
  -- What the purchase adds to the measure now: its net amount, or 1, or 0 once refunds took it
  -- below the offer's minimum.
  "contributed" BIGINT NOT NULL CHECK ("contributed" >= 0),
  "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  PRIMARY KEY ("transaction_id", "offer_id")
);
