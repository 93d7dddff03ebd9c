-- A group's purchases at each merchant, kept as they settle (API.md, Offer mechanics, Ranked lists):
-- how many, how much, and the latest one's date. The ranked offer list reads the group's rows in
-- the statement that reads its enrolments, instead of scanning its purchases on every request. The
-- settlement that records a purchase adds it in its own transaction, so the row moves exactly once
-- per settled purchase; each change is commutative (a count, a sum, the greatest date), so purchases
-- settled late or out of order leave the same row. No foreign keys: the settlement writing the row
-- has the group and the merchant in hand, and a check per insert would be paid on the hot path.
CREATE TABLE "chg_merchant_history" (
    "chg_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "purchases" INTEGER NOT NULL,
    "spend_minor" BIGINT NOT NULL,
    "last_purchase_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "chg_merchant_history_pkey" PRIMARY KEY ("chg_id", "merchant_id"),
    CONSTRAINT "chg_merchant_history_counts" CHECK ("purchases" > 0 AND "spend_minor" >= 0)
);

-- The purchases settled before this release: the same rows the settlements would have written
-- (settled purchases in USD at a merchant the service identified), read once.
INSERT INTO "chg_merchant_history" ("chg_id", "merchant_id", "issuer_id", "purchases", "spend_minor", "last_purchase_at")
SELECT e."chg_id", e."merchant_id", e."issuer_id", count(*), sum(e."amount_minor"), max(e."event_created_at")
  FROM "ingested_event" e
 WHERE e."kind" = 'settled' AND e."processed_at" IS NOT NULL AND e."merchant_id" IS NOT NULL
   AND e."currency" = 'usd' AND e."reward_status" IN ('matched', 'not_matched', 'reversed')
 GROUP BY e."chg_id", e."merchant_id", e."issuer_id";
