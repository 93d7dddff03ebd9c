-- Customer service on the ledger: adjustments (credits and debits an issuer's support posts,
-- funded by the issuer's own adjustment account) and claims (a cardholder's "my reward is
-- missing", decided by a workflow per claim). Additive: the previous release neither reads
-- nor writes any of it.

-- The issuer funds adjustments: a debit-normal account per issuer, like the merchant's
-- receivable is for earned reward.
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_kind_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_kind_check"
  CHECK ("kind" IN ('merchant_receivable', 'chg_cashback', 'chg_branded', 'breakage', 'issuer_adjustments'));
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_normal_side_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_normal_side_check" CHECK (
  ("kind" IN ('merchant_receivable', 'issuer_adjustments') AND "normal_side" = 'debit') OR
  ("kind" IN ('chg_cashback', 'chg_branded', 'breakage') AND "normal_side" = 'credit'));
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_shape_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_shape_check" CHECK (
  ("kind" = 'chg_cashback' AND "chg_id" IS NOT NULL AND "merchant_id" IS NULL) OR
  ("kind" = 'chg_branded' AND "chg_id" IS NOT NULL AND "merchant_id" IS NOT NULL) OR
  ("kind" IN ('merchant_receivable', 'breakage') AND "chg_id" IS NULL AND "merchant_id" IS NOT NULL) OR
  ("kind" = 'issuer_adjustments' AND "chg_id" IS NULL AND "merchant_id" IS NULL));

ALTER TABLE "ledger_transfer" DROP CONSTRAINT "ledger_transfer_kind_check";
ALTER TABLE "ledger_transfer" ADD CONSTRAINT "ledger_transfer_kind_check" CHECK ("kind" IN (
  'earn_cashback', 'earn_branded', 'spend_branded', 'expire_branded', 'clawback_cashback', 'clawback_branded',
  'adjust_credit_cashback', 'adjust_credit_branded', 'adjust_debit_cashback', 'adjust_debit_branded'));

-- An adjustment's reward event carries its signed amount (a debit is negative), so the
-- activity feed and the running totals show the net change; every other type stays positive.
ALTER TABLE "reward_event" DROP CONSTRAINT "reward_event_type_check";
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_type_check" CHECK ("type" IN (
  'cashback_earned', 'branded_earned', 'branded_spent', 'branded_expired', 'cashback_clawed_back', 'branded_clawed_back',
  'cashback_adjusted', 'branded_adjusted'));
ALTER TABLE "reward_event" DROP CONSTRAINT "reward_event_amount_minor_check";
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_amount_minor_check"
  CHECK ("amount_minor" > 0 OR ("type" IN ('cashback_adjusted', 'branded_adjusted') AND "amount_minor" <> 0));
ALTER TABLE "reward_total" DROP CONSTRAINT "reward_total_amount_minor_check";
ALTER TABLE "reward_total" ADD CONSTRAINT "reward_total_amount_minor_check"
  CHECK ("amount_minor" >= 0 OR "type" IN ('cashback_adjusted', 'branded_adjusted'));

ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check" CHECK ("type" IN (
  'qualified_auth', 'qualified_settlement',
  'reward_available', 'reward_expiring', 'reward_expired', 'reward_clawed_back', 'authorization_lapsed',
  'endpoint_disabled', 'reward_adjusted', 'claim_resolved'));

-- The largest single adjustment an issuer's token may post (operator PATCH /admin/v1/issuers).
ALTER TABLE "issuer" ADD COLUMN "adjustment_limit_minor" BIGINT NOT NULL DEFAULT 10000
  CONSTRAINT "issuer_adjustment_limit_minor_check" CHECK ("adjustment_limit_minor" > 0);

CREATE TABLE "adjustment" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "balance_type" TEXT NOT NULL,
    -- Signed: a credit is positive, a debit negative.
    "amount_minor" BIGINT NOT NULL,
    "merchant_id" TEXT,
    "reason_code" TEXT NOT NULL,
    "note" TEXT,
    "transaction_id" TEXT,
    "claim_id" TEXT,
    -- Who asked: the API token's id, or 'operator' for a claim approved by an operator.
    "actor" TEXT NOT NULL,
    -- The request's Idempotency-Key, scoped by issuer: the same key never posts twice, even
    -- after the HTTP replay window; a claim's approval uses claim:<id>:<balance type>.
    "idempotency_key" TEXT NOT NULL,
    -- What the request asked for, to tell a replay from a reuse of the key with another body.
    "request_hash" TEXT NOT NULL,
    "transfer_id" TEXT NOT NULL,
    "reward_event_id" TEXT NOT NULL,
    "reward_grant_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "adjustment_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "adjustment_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "adjustment_balance_type_check" CHECK ("balance_type" IN ('cashback', 'branded')),
    CONSTRAINT "adjustment_amount_minor_check" CHECK ("amount_minor" <> 0),
    CONSTRAINT "adjustment_merchant_check" CHECK (("balance_type" = 'branded') = ("merchant_id" IS NOT NULL)),
    CONSTRAINT "adjustment_reason_code_check" CHECK ("reason_code" IN ('goodwill', 'missing_reward', 'correction', 'fraud'))
);
CREATE UNIQUE INDEX "adjustment_issuer_id_idempotency_key_key" ON "adjustment"("issuer_id", "idempotency_key");
CREATE UNIQUE INDEX "adjustment_transfer_id_key" ON "adjustment"("transfer_id");
CREATE INDEX "adjustment_issuer_id_chg_id_created_at_id_idx" ON "adjustment"("issuer_id", "chg_id", "created_at" DESC, "id" DESC);

CREATE TABLE "claim" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "transaction_id" TEXT,
    "external_id" TEXT,
    "reason" TEXT NOT NULL,
    "merchant_id" TEXT,
    "note" TEXT,
    -- open (the workflow is deciding), needs_review (an operator decides), approved, rejected.
    "status" TEXT NOT NULL DEFAULT 'open',
    "reason_code" TEXT,
    -- The match trace and the reward the rules give, as the decision saw them.
    "evidence" JSONB,
    "computed_cashback_minor" BIGINT,
    "computed_branded_minor" BIGINT,
    "adjustment_ids" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "resolution_note" TEXT,
    "resolved_by" TEXT,
    "resolved_at" TIMESTAMPTZ(3),
    "workflow_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "claim_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "claim_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "claim_reason_check" CHECK ("reason" IN ('missing_reward', 'wrong_amount')),
    CONSTRAINT "claim_status_check" CHECK ("status" IN ('open', 'needs_review', 'approved', 'rejected')),
    CONSTRAINT "claim_resolved_check" CHECK (("status" IN ('approved', 'rejected')) = ("resolved_at" IS NOT NULL))
);
-- One claim at a time per transaction: a second while one is undecided is 409 claim_open.
CREATE UNIQUE INDEX "claim_one_open_per_transaction" ON "claim"("issuer_id", "transaction_id")
  WHERE "status" IN ('open', 'needs_review') AND "transaction_id" IS NOT NULL;
CREATE INDEX "claim_issuer_id_chg_id_created_at_id_idx" ON "claim"("issuer_id", "chg_id", "created_at" DESC, "id" DESC);
CREATE INDEX "claim_status_created_at_id_idx" ON "claim"("status", "created_at", "id");
