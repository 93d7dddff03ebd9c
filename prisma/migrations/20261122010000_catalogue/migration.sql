-- Catalogue: merchants and offers (owned by the operator) and per-group merchant activations.

CREATE TABLE "merchant" (
    "id" TEXT NOT NULL,
    -- NULL: visible to every issuer; otherwise only to the issuers listed.
    "issuer_ids" TEXT[],
    "name" TEXT NOT NULL,
    "category" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'active',
    "logo_url" TEXT,
    "website_url" TEXT,
    "branded_enabled" BOOLEAN NOT NULL DEFAULT false,
    "branded_spend_minimum_minor" BIGINT NOT NULL DEFAULT 0,
    "branded_availability_delay_days" INTEGER NOT NULL DEFAULT 0,
    "branded_expiry_days" INTEGER NOT NULL DEFAULT 365,
    "match_descriptor_patterns" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "match_acquirer_merchant_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "match_mccs" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "merchant_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "merchant_status_check" CHECK ("status" IN ('active', 'inactive')),
    CONSTRAINT "merchant_spend_minimum_check" CHECK ("branded_spend_minimum_minor" >= 0),
    CONSTRAINT "merchant_delay_check" CHECK ("branded_availability_delay_days" BETWEEN 0 AND 365),
    CONSTRAINT "merchant_expiry_check" CHECK ("branded_expiry_days" BETWEEN 1 AND 3650)
);
-- The issuer merchant list is sorted by name, then id.
CREATE INDEX "merchant_name_id_idx" ON "merchant"("name", "id");

CREATE TABLE "offer" (
    "id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT,
    "cashback_rate_bps" INTEGER NOT NULL,
    "branded_rate_bps" INTEGER NOT NULL,
    "min_spend_minor" BIGINT NOT NULL DEFAULT 0,
    "max_reward_minor" BIGINT,
    "max_reward_per_chg_minor" BIGINT,
    "mccs" TEXT[],
    "starts_at" TIMESTAMPTZ(3) NOT NULL,
    "ends_at" TIMESTAMPTZ(3),
    "status" TEXT NOT NULL DEFAULT 'active',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "offer_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "offer_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchant"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "offer_status_check" CHECK ("status" IN ('active', 'inactive')),
    CONSTRAINT "offer_cashback_rate_check" CHECK ("cashback_rate_bps" BETWEEN 0 AND 10000),
    CONSTRAINT "offer_branded_rate_check" CHECK ("branded_rate_bps" BETWEEN 0 AND 10000),
    CONSTRAINT "offer_min_spend_check" CHECK ("min_spend_minor" >= 0),
    CONSTRAINT "offer_max_reward_check" CHECK ("max_reward_minor" IS NULL OR "max_reward_minor" >= 0),
    CONSTRAINT "offer_max_reward_per_chg_check" CHECK ("max_reward_per_chg_minor" IS NULL OR "max_reward_per_chg_minor" >= 0),
    CONSTRAINT "offer_window_check" CHECK ("ends_at" IS NULL OR "ends_at" >= "starts_at")
);
CREATE INDEX "offer_merchant_id_idx" ON "offer"("merchant_id");
-- Offer lists are sorted by startsAt, then id.
CREATE INDEX "offer_starts_at_id_idx" ON "offer"("starts_at", "id");

-- Keyed by (group, merchant): activation is per merchant, not per offer, and has no public id.
CREATE TABLE "activation" (
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "activated_at" TIMESTAMPTZ(3) NOT NULL,
    "presented_offer_id" TEXT,
    "deactivated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    -- One activation per merchant and group: concurrent PUTs meet here (ON CONFLICT).
    CONSTRAINT "activation_pkey" PRIMARY KEY ("chg_id", "merchant_id"),
    CONSTRAINT "activation_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "activation_chg_id_fkey" FOREIGN KEY ("chg_id") REFERENCES "cardholder_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "activation_merchant_id_fkey" FOREIGN KEY ("merchant_id") REFERENCES "merchant"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "activation_presented_offer_id_fkey" FOREIGN KEY ("presented_offer_id") REFERENCES "offer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "activation_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE INDEX "activation_issuer_id_chg_id_idx" ON "activation"("issuer_id", "chg_id");
