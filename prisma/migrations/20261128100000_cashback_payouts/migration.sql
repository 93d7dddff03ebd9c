-- Cashback that is paid out: a hold for the return window, payout runs, and what a group owes when
-- a refund reverses cashback already paid out. Additive: the previous release neither reads nor
-- writes any of it (its refunds keep recording what they cannot take back as unrecoverable, which
-- a later migration turns into owed). The CHECKs of busy tables are widened NOT VALID (an instant,
-- under the runner's lock time-out: every stored row passes a wider CHECK by construction) and
-- validated by 20261128100200_cashback_checks_validated, which lets writes go on meanwhile; the
-- index of ledger_account is built concurrently by 20261128100050.

-- The return window: the issuer's default, an offer's own when it sets one.
ALTER TABLE "issuer" ADD COLUMN "cashback_hold_days" INTEGER NOT NULL DEFAULT 30
  CONSTRAINT "issuer_cashback_hold_days_check" CHECK ("cashback_hold_days" BETWEEN 0 AND 365);
ALTER TABLE "offer" ADD COLUMN "return_period_days" INTEGER
  CONSTRAINT "offer_return_period_days_check" CHECK ("return_period_days" BETWEEN 0 AND 365);

-- chg_cashback_owed: an asset (the group owes it back); issuer_payable: a liability (we owe the
-- issuer the cashback it paid out for the programme).
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_kind_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_kind_check" CHECK ("kind" IN (
  'merchant_receivable', 'chg_cashback', 'chg_branded', 'breakage', 'issuer_adjustments', 'chg_cashback_owed', 'issuer_payable')) NOT VALID;
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_normal_side_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_normal_side_check" CHECK (
  ("kind" IN ('merchant_receivable', 'issuer_adjustments', 'chg_cashback_owed') AND "normal_side" = 'debit') OR
  ("kind" IN ('chg_cashback', 'chg_branded', 'breakage', 'issuer_payable') AND "normal_side" = 'credit')) NOT VALID;
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_shape_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_shape_check" CHECK (
  ("kind" IN ('chg_cashback', 'chg_cashback_owed') AND "chg_id" IS NOT NULL AND "merchant_id" IS NULL) OR
  ("kind" = 'chg_branded' AND "chg_id" IS NOT NULL AND "merchant_id" IS NOT NULL) OR
  ("kind" IN ('merchant_receivable', 'breakage') AND "chg_id" IS NULL AND "merchant_id" IS NOT NULL) OR
  ("kind" IN ('issuer_adjustments', 'issuer_payable') AND "chg_id" IS NULL AND "merchant_id" IS NULL)) NOT VALID;
-- A group owes at most what refunds reversed: never below zero either.
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_owed_nonnegative_check"
  CHECK ("kind" <> 'chg_cashback_owed' OR "balance_minor" >= 0) NOT VALID;

ALTER TABLE "ledger_transfer" DROP CONSTRAINT "ledger_transfer_kind_check";
ALTER TABLE "ledger_transfer" ADD CONSTRAINT "ledger_transfer_kind_check" CHECK ("kind" IN (
  'earn_cashback', 'earn_branded', 'spend_branded', 'expire_branded', 'clawback_cashback', 'clawback_branded',
  'adjust_credit_cashback', 'adjust_credit_branded', 'adjust_debit_cashback', 'adjust_debit_branded',
  'payout_cashback', 'clawback_cashback_owed', 'repay_cashback_owed', 'write_off_cashback_owed')) NOT VALID;

-- Cashback leaving the balance (paid out, or applied to what the group owes) is negative, as the
-- activity feed shows it.
ALTER TABLE "reward_event" DROP CONSTRAINT "reward_event_type_check";
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_type_check" CHECK ("type" IN (
  'cashback_earned', 'branded_earned', 'branded_spent', 'branded_expired', 'cashback_clawed_back', 'branded_clawed_back',
  'cashback_adjusted', 'branded_adjusted', 'cashback_paid_out', 'cashback_owed_repaid')) NOT VALID;
ALTER TABLE "reward_event" DROP CONSTRAINT "reward_event_amount_minor_check";
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_amount_minor_check" CHECK (CASE
  WHEN "type" IN ('cashback_adjusted', 'branded_adjusted') THEN "amount_minor" <> 0
  WHEN "type" IN ('cashback_paid_out', 'cashback_owed_repaid') THEN "amount_minor" < 0
  ELSE "amount_minor" > 0 END) NOT VALID;
ALTER TABLE "reward_total" DROP CONSTRAINT "reward_total_amount_minor_check";
ALTER TABLE "reward_total" ADD CONSTRAINT "reward_total_amount_minor_check" CHECK (CASE
  WHEN "type" IN ('cashback_adjusted', 'branded_adjusted') THEN true
  WHEN "type" IN ('cashback_paid_out', 'cashback_owed_repaid') THEN "amount_minor" <= 0
  ELSE "amount_minor" >= 0 END) NOT VALID;

ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check" CHECK ("type" IN (
  'qualified_auth', 'qualified_settlement',
  'reward_available', 'reward_expiring', 'reward_expired', 'reward_clawed_back', 'authorization_lapsed',
  'endpoint_disabled', 'reward_adjusted', 'claim_resolved', 'cashback_paid_out', 'payout_completed')) NOT VALID;

-- write_off: the issuer forgives what a group owes (credits chg_cashback_owed).
ALTER TABLE "adjustment" DROP CONSTRAINT "adjustment_reason_code_check";
ALTER TABLE "adjustment" ADD CONSTRAINT "adjustment_reason_code_check"
  CHECK ("reason_code" IN ('goodwill', 'missing_reward', 'correction', 'fraud', 'write_off')) NOT VALID;

-- The cashback one purchase earned, on hold until payable_at (its date plus the return window, on
-- the issuer's clock); remaining is what of it the group still keeps (a refund inside the window
-- takes it back from here). What is on hold is the sum of remaining_minor with payable_at still
-- ahead: a few recent rows per group, whatever its history.
CREATE TABLE "cashback_hold" (
    "transaction_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "remaining_minor" BIGINT NOT NULL,
    "payable_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "cashback_hold_pkey" PRIMARY KEY ("transaction_id"),
    CONSTRAINT "cashback_hold_transaction_id_fkey" FOREIGN KEY ("transaction_id") REFERENCES "ingested_event"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "cashback_hold_amount_minor_check" CHECK ("amount_minor" > 0),
    CONSTRAINT "cashback_hold_remaining_minor_check" CHECK ("remaining_minor" BETWEEN 0 AND "amount_minor")
);
CREATE INDEX "cashback_hold_group_idx" ON "cashback_hold"("issuer_id", "chg_id", "payable_at") INCLUDE ("remaining_minor");

-- A payout: a run over the issuer's groups (kind run, one workflow) or one group's instant
-- cash-out (kind group). One run at a time per issuer.
CREATE TABLE "payout" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "request_hash" TEXT NOT NULL,
    "minimum_minor" BIGINT NOT NULL,
    "chg_ids" TEXT[],
    "description" TEXT,
    "as_of" TIMESTAMPTZ(3) NOT NULL,
    "group_count" INTEGER NOT NULL DEFAULT 0,
    "total_minor" BIGINT NOT NULL DEFAULT 0,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "payout_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "payout_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "payout_kind_check" CHECK ("kind" IN ('run', 'group')),
    CONSTRAINT "payout_status_check" CHECK ("status" IN ('processing', 'completed', 'failed')),
    CONSTRAINT "payout_minimum_minor_check" CHECK ("minimum_minor" >= 1),
    CONSTRAINT "payout_totals_check" CHECK ("group_count" >= 0 AND "total_minor" >= 0),
    CONSTRAINT "payout_completed_check" CHECK (("status" = 'processing') = ("completed_at" IS NULL))
);
CREATE UNIQUE INDEX "payout_issuer_id_idempotency_key_key" ON "payout"("issuer_id", "idempotency_key");
CREATE UNIQUE INDEX "payout_one_run_per_issuer_key" ON "payout"("issuer_id") WHERE "status" = 'processing' AND "kind" = 'run';
CREATE INDEX "payout_issuer_id_created_at_idx" ON "payout"("issuer_id", "created_at" DESC, "id" DESC);

-- One line per group a payout paid: at most one per (payout, group), whatever crashes.
CREATE TABLE "payout_item" (
    "payout_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "reward_event_id" TEXT NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "payout_item_pkey" PRIMARY KEY ("payout_id", "chg_id"),
    CONSTRAINT "payout_item_payout_id_fkey" FOREIGN KEY ("payout_id") REFERENCES "payout"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "payout_item_amount_minor_check" CHECK ("amount_minor" > 0)
);
CREATE UNIQUE INDEX "payout_item_transfer_id_key" ON "payout_item"("transfer_id");
