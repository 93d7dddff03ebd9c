-- What the issuer's app showed (API.md, Targeted offers, "Impressions"): one row per offer shown to
-- a group, at the instant the app gives (or the issuer's now). Only offers the group is treated
-- for are stored. The same (offer, group, instant, placement) is one impression, so an app that
-- resends a batch without an Idempotency-Key does not count it twice; the lift report counts
-- them per offer over a window (offer_impression_offer_shown_idx).
CREATE TABLE "offer_impression" (
    "id" BIGSERIAL NOT NULL,
    "offer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "shown_at" TIMESTAMPTZ(3) NOT NULL,
    "placement" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "offer_impression_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "offer_impression_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "offer_impression_chg_id_fkey" FOREIGN KEY ("chg_id") REFERENCES "cardholder_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "offer_impression_once_key" ON "offer_impression"("offer_id", "chg_id", "shown_at", "placement") NULLS NOT DISTINCT;
CREATE INDEX "offer_impression_offer_shown_idx" ON "offer_impression"("offer_id", "shown_at");
CREATE INDEX "offer_impression_chg_id_idx" ON "offer_impression"("chg_id");
