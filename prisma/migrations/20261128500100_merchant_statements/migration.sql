-- Merchant statements: what each merchant owes the programme for a period, per issuer, billed by
-- an operator's run and paid with postings to the ledger. Additive: nothing of the previous
-- release reads or writes these tables.

-- One operator run over a period: one workflow bills every (issuer, merchant) with activity.
-- One run at a time, so that two runs never bill one account at once.
CREATE TABLE "statement_run" (
    "id" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "statement_count" INTEGER NOT NULL DEFAULT 0,
    "total_due_minor" BIGINT NOT NULL DEFAULT 0,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "statement_run_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "statement_run_period_check" CHECK ("period" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    CONSTRAINT "statement_run_status_check" CHECK ("status" IN ('processing', 'completed', 'failed')),
    CONSTRAINT "statement_run_completed_check" CHECK (("status" = 'processing') = ("completed_at" IS NULL))
);
CREATE UNIQUE INDEX "statement_run_idempotency_key_key" ON "statement_run"("idempotency_key");
CREATE UNIQUE INDEX "statement_run_one_processing_key" ON "statement_run"((true)) WHERE "status" = 'processing';
CREATE INDEX "statement_run_created_at_idx" ON "statement_run"("created_at" DESC, "id" DESC);

-- One statement per (issuer, merchant, period). Its transfers are never listed row by row: they
-- are the entries of its merchant_receivable account (and, for the breakage line, of its breakage
-- account) inside a window fixed when it was issued, so it never changes, and every transfer lands
-- on exactly one statement (docs/decisions/0040-merchant-statements.md):
--   id <= mark AND created_at < period_end AND NOT (id <= prev_mark AND created_at < prev_period_end)
-- An entry's id is taken while its account's row is locked, so an account's ids grow in commit
-- order and every id up to a mark read in one snapshot is committed and visible in it. Scans start
-- at from_id; carried_id is the lowest id up to the mark left for the next statement (posted in
-- a later period), NULL when none.
CREATE TABLE "statement" (
    "id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "status" TEXT NOT NULL,
    "cashback_funded_minor" BIGINT NOT NULL,
    "branded_funded_minor" BIGINT NOT NULL,
    "branded_spent_minor" BIGINT NOT NULL,
    "clawed_back_minor" BIGINT NOT NULL,
    "commission_minor" BIGINT NOT NULL,
    "breakage_minor" BIGINT NOT NULL,
    "total_due_minor" BIGINT NOT NULL,
    "paid_minor" BIGINT NOT NULL DEFAULT 0,
    "transfer_count" INTEGER NOT NULL,
    "prev_period_end" TIMESTAMPTZ(3),
    "from_id" BIGINT NOT NULL,
    "mark_id" BIGINT NOT NULL,
    "prev_mark_id" BIGINT NOT NULL,
    "carried_id" BIGINT,
    "breakage_from_id" BIGINT NOT NULL,
    "breakage_mark_id" BIGINT NOT NULL,
    "breakage_prev_mark_id" BIGINT NOT NULL,
    "breakage_carried_id" BIGINT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "statement_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "statement_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "statement_run"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "statement_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "statement_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "ledger_account"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "statement_period_check" CHECK ("period" ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    CONSTRAINT "statement_status_check" CHECK ("status" IN ('issued', 'paid')),
    CONSTRAINT "statement_total_check" CHECK ("total_due_minor" =
      "cashback_funded_minor" + "branded_funded_minor" - "branded_spent_minor" - "clawed_back_minor" + "commission_minor"),
    CONSTRAINT "statement_amounts_check" CHECK ("breakage_minor" >= 0 AND "paid_minor" >= 0 AND "transfer_count" >= 0),
    CONSTRAINT "statement_window_check" CHECK ("prev_mark_id" <= "mark_id" AND "breakage_prev_mark_id" <= "breakage_mark_id"
      AND ("prev_period_end" IS NULL OR "prev_period_end" < "period_end"))
);
CREATE UNIQUE INDEX "statement_issuer_id_merchant_id_period_key" ON "statement"("issuer_id", "merchant_id", "period");
-- An account's latest statement (the window the next one starts from).
CREATE INDEX "statement_account_id_period_end_idx" ON "statement"("account_id", "period_end" DESC);
CREATE INDEX "statement_period_id_idx" ON "statement"("period", "id");
CREATE INDEX "statement_run_id_idx" ON "statement"("run_id");

-- A merchant's payment against a statement, posted to the ledger (merchant_cash -> receivable).
CREATE TABLE "statement_payment" (
    "id" TEXT NOT NULL,
    "statement_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "reference" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "statement_payment_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "statement_payment_statement_id_fkey" FOREIGN KEY ("statement_id") REFERENCES "statement"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "statement_payment_transfer_id_fkey" FOREIGN KEY ("transfer_id") REFERENCES "ledger_transfer"("id") ON DELETE RESTRICT ON UPDATE RESTRICT,
    CONSTRAINT "statement_payment_amount_minor_check" CHECK ("amount_minor" > 0)
);
CREATE UNIQUE INDEX "statement_payment_idempotency_key_key" ON "statement_payment"("idempotency_key");
CREATE UNIQUE INDEX "statement_payment_transfer_id_key" ON "statement_payment"("transfer_id");
CREATE INDEX "statement_payment_statement_id_idx" ON "statement_payment"("statement_id", "created_at");

-- A statement run walks the merchants' receivables in id order, among every account there is.
CREATE INDEX "ledger_account_receivable_id_idx" ON "ledger_account"("id") WHERE "kind" = 'merchant_receivable';
