-- Foundation: issuers, API tokens, cardholder groups, cardholders, cards, operator audit log.

CREATE TABLE "issuer" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "environment" TEXT NOT NULL,
    "branded_availability_delay_days" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "issuer_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "issuer_environment_check" CHECK ("environment" IN ('sandbox', 'production')),
    CONSTRAINT "issuer_delay_check" CHECK ("branded_availability_delay_days" BETWEEN 0 AND 365)
);

CREATE TABLE "api_token" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "label" TEXT,
    "token_hash" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),
    CONSTRAINT "api_token_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "api_token_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "api_token_token_hash_key" ON "api_token"("token_hash");
CREATE INDEX "api_token_issuer_id_idx" ON "api_token"("issuer_id");

CREATE TABLE "cardholder_group" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "settings" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deactivated_at" TIMESTAMPTZ(3),
    CONSTRAINT "cardholder_group_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "cardholder_group_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "cardholder_group_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE UNIQUE INDEX "cardholder_group_issuer_id_external_id_key" ON "cardholder_group"("issuer_id", "external_id");

CREATE TABLE "cardholder" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deactivated_at" TIMESTAMPTZ(3),
    CONSTRAINT "cardholder_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "cardholder_chg_id_fkey" FOREIGN KEY ("chg_id") REFERENCES "cardholder_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "cardholder_status_check" CHECK ("status" IN ('active', 'inactive'))
);
CREATE UNIQUE INDEX "cardholder_chg_id_external_id_key" ON "cardholder"("chg_id", "external_id");
CREATE INDEX "cardholder_issuer_id_external_id_idx" ON "cardholder"("issuer_id", "external_id");
-- An issuer's cardholder id may be active in one group at a time (API.md: 409 external_id_conflict).
CREATE UNIQUE INDEX "cardholder_active_external_id_key" ON "cardholder"("issuer_id", "external_id") WHERE "status" = 'active';

CREATE TABLE "card" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "cardholder_id" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deactivated_at" TIMESTAMPTZ(3),
    CONSTRAINT "card_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "card_cardholder_id_fkey" FOREIGN KEY ("cardholder_id") REFERENCES "cardholder"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "card_status_check" CHECK ("status" IN ('active', 'inactive')),
    CONSTRAINT "card_last4_check" CHECK ("last4" ~ '^[0-9]{4}$')
);
CREATE UNIQUE INDEX "card_cardholder_id_external_id_key" ON "card"("cardholder_id", "external_id");
CREATE INDEX "card_issuer_id_external_id_idx" ON "card"("issuer_id", "external_id");
CREATE UNIQUE INDEX "card_active_external_id_key" ON "card"("issuer_id", "external_id") WHERE "status" = 'active';

CREATE TABLE "operator_audit_log" (
    "id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target_id" TEXT,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "operator_audit_log_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "operator_audit_log_created_at_idx" ON "operator_audit_log"("created_at");
