-- Erasure of a cardholder group (docs/decisions/0055-erasure-keeps-the-books.md). The group's,
-- its cardholders' and cards' personal fields become tombstones in place, so every ledger row,
-- reward event and statement keeps pointing at the same pseudonymous ids.
-- A nullable column without a default: PostgreSQL adds it without rewriting the table.
ALTER TABLE "cardholder_group" ADD COLUMN "erased_at" TIMESTAMPTZ(3);

-- Who erased a group and when: one row per group, never updated.
CREATE TABLE "chg_erasure" (
    "chg_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "token_id" TEXT NOT NULL,
    "request_id" TEXT,
    "cardholders" INTEGER NOT NULL,
    "cards" INTEGER NOT NULL,
    "events" INTEGER NOT NULL,
    "claims" INTEGER NOT NULL,
    "adjustments" INTEGER NOT NULL,
    "erased_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "chg_erasure_pkey" PRIMARY KEY ("chg_id"),
    CONSTRAINT "chg_erasure_chg_id_fkey" FOREIGN KEY ("chg_id") REFERENCES "cardholder_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE INDEX "chg_erasure_issuer_id_erased_at_idx" ON "chg_erasure"("issuer_id", "erased_at");

-- The erased external ids, kept only as SHA-256 digests: enough to answer a later event naming
-- one with chg_erased rather than unknown_card, without keeping the id itself.
CREATE TABLE "erased_external_id" (
    "issuer_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "digest" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "erased_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "erased_external_id_pkey" PRIMARY KEY ("issuer_id", "kind", "digest"),
    CONSTRAINT "erased_external_id_kind_check" CHECK ("kind" IN ('chg', 'cardholder', 'card'))
);

-- The chg_erased webhook. The type CHECK is widened NOT VALID (no scan of the webhook table under
-- its lock): every existing row already meets the narrower one; validated by the next migration.
ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check" CHECK ("type" IN (
  'qualified_auth', 'qualified_settlement',
  'reward_available', 'reward_expiring', 'reward_expired', 'reward_clawed_back', 'authorization_lapsed',
  'endpoint_disabled', 'reward_adjusted', 'claim_resolved', 'cashback_paid_out', 'payout_completed',
  'offer_available', 'chg_erased')) NOT VALID;
