-- Ledger: double-entry accounts, transfers and entries; branded-balance grants; reward events.
-- Merchants and transactions are referenced by plain TEXT ids (the catalogue and purchase
-- tables live in other migrations), issuers by foreign key.

CREATE TABLE "ledger_account" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "chg_id" TEXT,
    "merchant_id" TEXT,
    "normal_side" TEXT NOT NULL,
    -- Cached, signed by the normal side (positive = the account holds value); updated in the
    -- same transaction as the entries and checked against them by ledgerInvariants().
    "balance_minor" BIGINT NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_account_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_account_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "ledger_account_kind_check" CHECK ("kind" IN ('merchant_receivable', 'chg_cashback', 'chg_branded', 'breakage')),
    CONSTRAINT "ledger_account_normal_side_check" CHECK (
        ("kind" = 'merchant_receivable' AND "normal_side" = 'debit') OR
        ("kind" IN ('chg_cashback', 'chg_branded', 'breakage') AND "normal_side" = 'credit')),
    CONSTRAINT "ledger_account_shape_check" CHECK (
        ("kind" = 'chg_cashback' AND "chg_id" IS NOT NULL AND "merchant_id" IS NULL) OR
        ("kind" = 'chg_branded' AND "chg_id" IS NOT NULL AND "merchant_id" IS NOT NULL) OR
        ("kind" IN ('merchant_receivable', 'breakage') AND "chg_id" IS NULL AND "merchant_id" IS NOT NULL)),
    -- What the service owes a group can never be negative.
    CONSTRAINT "ledger_account_liability_nonnegative_check" CHECK ("kind" NOT IN ('chg_cashback', 'chg_branded') OR "balance_minor" >= 0)
);
CREATE INDEX "ledger_account_issuer_id_kind_idx" ON "ledger_account"("issuer_id", "kind");

CREATE TABLE "reward_event" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "currency" TEXT NOT NULL DEFAULT 'usd',
    "merchant_id" TEXT,
    "transaction_id" TEXT,
    "reward_grant_id" TEXT,
    "idempotency_key" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reward_event_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reward_event_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "reward_event_type_check" CHECK ("type" IN ('cashback_earned', 'branded_earned', 'branded_spent', 'branded_expired', 'cashback_clawed_back', 'branded_clawed_back')),
    CONSTRAINT "reward_event_amount_minor_check" CHECK ("amount_minor" > 0),
    CONSTRAINT "reward_event_currency_check" CHECK ("currency" = 'usd')
);
CREATE UNIQUE INDEX "reward_event_idempotency_key_key" ON "reward_event"("idempotency_key");
CREATE INDEX "reward_event_activity_idx" ON "reward_event"("issuer_id", "chg_id", "occurred_at" DESC, "id" DESC);

CREATE TABLE "ledger_transfer" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "debit_account_id" TEXT NOT NULL,
    "credit_account_id" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "reward_event_id" TEXT,
    "transaction_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_transfer_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_transfer_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "ledger_transfer_debit_account_id_fkey" FOREIGN KEY ("debit_account_id") REFERENCES "ledger_account"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "ledger_transfer_credit_account_id_fkey" FOREIGN KEY ("credit_account_id") REFERENCES "ledger_account"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    -- Deferred: a caller may post the transfer and record its reward event in either order
    -- inside one database transaction.
    CONSTRAINT "ledger_transfer_reward_event_id_fkey" FOREIGN KEY ("reward_event_id") REFERENCES "reward_event"("id") ON DELETE RESTRICT ON UPDATE RESTRICT DEFERRABLE INITIALLY DEFERRED,
    CONSTRAINT "ledger_transfer_kind_check" CHECK ("kind" IN ('earn_cashback', 'earn_branded', 'spend_branded', 'expire_branded', 'clawback_cashback', 'clawback_branded')),
    CONSTRAINT "ledger_transfer_amount_minor_check" CHECK ("amount_minor" > 0),
    CONSTRAINT "ledger_transfer_distinct_accounts_check" CHECK ("debit_account_id" <> "credit_account_id")
);
CREATE UNIQUE INDEX "ledger_transfer_idempotency_key_key" ON "ledger_transfer"("idempotency_key");
CREATE INDEX "ledger_transfer_issuer_id_transaction_id_idx" ON "ledger_transfer"("issuer_id", "transaction_id");

CREATE TABLE "ledger_entry" (
    "id" BIGSERIAL NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    -- Signed: positive = debit, negative = credit. A transfer's entries sum to zero.
    "amount_minor" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "ledger_entry_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ledger_entry_transfer_id_fkey" FOREIGN KEY ("transfer_id") REFERENCES "ledger_transfer"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "ledger_entry_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "ledger_account"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "ledger_entry_amount_minor_check" CHECK ("amount_minor" <> 0)
);
CREATE INDEX "ledger_entry_transfer_id_idx" ON "ledger_entry"("transfer_id");
CREATE INDEX "ledger_entry_account_id_idx" ON "ledger_entry"("account_id");
CREATE INDEX "ledger_entry_issuer_id_idx" ON "ledger_entry"("issuer_id");

-- Entries are immutable: corrections are new transfers.
CREATE FUNCTION "ledger_entry_immutable"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger entries and transfers are immutable' USING ERRCODE = 'P0001';
END;
$$;
CREATE TRIGGER "ledger_entry_no_update" BEFORE UPDATE OR DELETE ON "ledger_entry"
    FOR EACH ROW EXECUTE FUNCTION "ledger_entry_immutable"();
CREATE TRIGGER "ledger_transfer_no_update" BEFORE UPDATE OR DELETE ON "ledger_transfer"
    FOR EACH ROW EXECUTE FUNCTION "ledger_entry_immutable"();

CREATE TABLE "reward_grant" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    -- The earn_branded transfer that funded the grant: one grant per earn, and the key that
    -- makes creating a grant idempotent.
    "earn_transfer_id" TEXT NOT NULL,
    "source_transaction_id" TEXT,
    "amount_minor" BIGINT NOT NULL,
    "remaining_minor" BIGINT NOT NULL,
    "available_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reward_grant_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reward_grant_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "reward_grant_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "ledger_account"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "reward_grant_earn_transfer_id_fkey" FOREIGN KEY ("earn_transfer_id") REFERENCES "ledger_transfer"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "reward_grant_amount_minor_check" CHECK ("amount_minor" > 0),
    CONSTRAINT "reward_grant_remaining_minor_check" CHECK ("remaining_minor" >= 0 AND "remaining_minor" <= "amount_minor"),
    CONSTRAINT "reward_grant_window_check" CHECK ("available_at" < "expires_at")
);
CREATE UNIQUE INDEX "reward_grant_earn_transfer_id_key" ON "reward_grant"("earn_transfer_id");
CREATE INDEX "reward_grant_fifo_idx" ON "reward_grant"("issuer_id", "chg_id", "merchant_id", "expires_at");
CREATE INDEX "reward_grant_account_id_idx" ON "reward_grant"("account_id");

-- Deferred for the same reason as ledger_transfer.reward_event_id.
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_reward_grant_id_fkey" FOREIGN KEY ("reward_grant_id") REFERENCES "reward_grant"("id") ON DELETE RESTRICT ON UPDATE RESTRICT DEFERRABLE INITIALLY DEFERRED;

-- Which grants each spend, expiry or clawback transfer drew from: the audit trail of a
-- grant's remaining value (remaining = amount - sum of draws), and what a replayed
-- operation returns.
CREATE TABLE "reward_grant_draw" (
    "id" BIGSERIAL NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "grant_id" TEXT NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "reward_grant_draw_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reward_grant_draw_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "reward_grant"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "reward_grant_draw_transfer_id_fkey" FOREIGN KEY ("transfer_id") REFERENCES "ledger_transfer"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "reward_grant_draw_amount_minor_check" CHECK ("amount_minor" > 0)
);
CREATE UNIQUE INDEX "reward_grant_draw_transfer_id_grant_id_key" ON "reward_grant_draw"("transfer_id", "grant_id");
CREATE INDEX "reward_grant_draw_grant_id_idx" ON "reward_grant_draw"("grant_id");
