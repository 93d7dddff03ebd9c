-- Funded offers: a budget per offer (lifetime or per calendar month), the issuer's share of each
-- reward, and the merchant's commission; the ledger accounts and transfers that carry them.
-- Additive: the previous release neither reads nor writes any of it (its settlements give no
-- budget a thought, and post neither shares nor commission).

-- budget_minor: the reward (cashback and branded) the offer may give across every group of every
-- issuer; NULL: unlimited. budget_period 'month' resets it each calendar month (UTC) of the
-- purchase's date; NULL: one budget for the offer's life.
ALTER TABLE "offer" ADD COLUMN "budget_minor" BIGINT
  CONSTRAINT "offer_budget_minor_check" CHECK ("budget_minor" >= 0);
ALTER TABLE "offer" ADD COLUMN "budget_period" TEXT
  CONSTRAINT "offer_budget_period_check" CHECK ("budget_period" IN ('month'));
-- The issuer's share of each reward, in basis points; the merchant funds the rest.
ALTER TABLE "offer" ADD COLUMN "funding_issuer_share_bps" INTEGER NOT NULL DEFAULT 0
  CONSTRAINT "offer_funding_issuer_share_bps_check" CHECK ("funding_issuer_share_bps" BETWEEN 0 AND 10000);
-- What the merchant owes the programme per qualifying settled purchase: a rate of the amount the
-- reward was computed on, plus a flat amount.
ALTER TABLE "offer" ADD COLUMN "commission_rate_bps" INTEGER NOT NULL DEFAULT 0
  CONSTRAINT "offer_commission_rate_bps_check" CHECK ("commission_rate_bps" BETWEEN 0 AND 10000);
ALTER TABLE "offer" ADD COLUMN "commission_flat_minor" BIGINT NOT NULL DEFAULT 0
  CONSTRAINT "offer_commission_flat_minor_check" CHECK ("commission_flat_minor" >= 0);

-- What each budget period of an offer has given, net of refunds: one row per (offer, period),
-- period '' for a lifetime budget and 'YYYY-MM' for a monthly one. The hottest row of the system
-- (every settlement at a budgeted offer updates it); its limit stays on the offer. Half of each
-- page is left free so that its updates stay heap-only (HOT) between page prunes
-- (docs/decisions/0039-offer-budgets.md).
CREATE TABLE "offer_budget" (
    "offer_id" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "used_minor" BIGINT NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "offer_budget_pkey" PRIMARY KEY ("offer_id", "period"),
    CONSTRAINT "offer_budget_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "offer_budget_used_minor_check" CHECK ("used_minor" >= 0),
    CONSTRAINT "offer_budget_period_check" CHECK ("period" ~ '^([0-9]{4}-(0[1-9]|1[0-2]))?$')
) WITH (fillfactor = 50);

-- issuer_funding: an asset (the issuer owes the programme its share of the rewards); commission:
-- income, per merchant; merchant_cash: an asset (what merchants paid on their statements).
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_kind_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_kind_check" CHECK ("kind" IN (
  'merchant_receivable', 'chg_cashback', 'chg_branded', 'breakage', 'issuer_adjustments', 'chg_cashback_owed', 'issuer_payable',
  'issuer_funding', 'commission', 'merchant_cash'));
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_normal_side_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_normal_side_check" CHECK (
  ("kind" IN ('merchant_receivable', 'issuer_adjustments', 'chg_cashback_owed', 'issuer_funding', 'merchant_cash') AND "normal_side" = 'debit') OR
  ("kind" IN ('chg_cashback', 'chg_branded', 'breakage', 'issuer_payable', 'commission') AND "normal_side" = 'credit'));
ALTER TABLE "ledger_account" DROP CONSTRAINT "ledger_account_shape_check";
ALTER TABLE "ledger_account" ADD CONSTRAINT "ledger_account_shape_check" CHECK (
  ("kind" IN ('chg_cashback', 'chg_cashback_owed') AND "chg_id" IS NOT NULL AND "merchant_id" IS NULL) OR
  ("kind" = 'chg_branded' AND "chg_id" IS NOT NULL AND "merchant_id" IS NOT NULL) OR
  ("kind" IN ('merchant_receivable', 'breakage', 'commission') AND "chg_id" IS NULL AND "merchant_id" IS NOT NULL) OR
  ("kind" IN ('issuer_adjustments', 'issuer_payable', 'issuer_funding', 'merchant_cash') AND "chg_id" IS NULL AND "merchant_id" IS NULL));

ALTER TABLE "ledger_transfer" DROP CONSTRAINT "ledger_transfer_kind_check";
ALTER TABLE "ledger_transfer" ADD CONSTRAINT "ledger_transfer_kind_check" CHECK ("kind" IN (
  'earn_cashback', 'earn_branded', 'spend_branded', 'expire_branded', 'clawback_cashback', 'clawback_branded',
  'adjust_credit_cashback', 'adjust_credit_branded', 'adjust_debit_cashback', 'adjust_debit_branded',
  'payout_cashback', 'clawback_cashback_owed', 'repay_cashback_owed', 'write_off_cashback_owed',
  'issuer_share_cashback', 'issuer_share_branded', 'issuer_share_returned', 'commission_charged', 'commission_returned',
  'merchant_payment'));
