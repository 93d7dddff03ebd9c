-- An approved claim's credit is the purchase's own reward (API.md, Claims): later refunds of the
-- purchase take it back in proportion, to the issuer that funded it. The refund needs what refunds
-- had already taken of the purchase when the credit was posted (the credit was for the rest), so
-- the adjustment keeps it; null for every other adjustment, which no refund touches.
ALTER TABLE "adjustment" ADD COLUMN "purchase_refunded_minor" BIGINT
  CONSTRAINT "adjustment_purchase_refunded_minor_check" CHECK ("purchase_refunded_minor" >= 0);

-- What such a refund takes back beyond what the group still holds (it was paid out) is owed by the
-- group to the issuer: debit chg_cashback_owed, credit issuer_adjustments. Widened NOT VALID (no
-- scan under the table's lock), validated by the next migration.
ALTER TABLE "ledger_transfer" DROP CONSTRAINT "ledger_transfer_kind_check";
ALTER TABLE "ledger_transfer" ADD CONSTRAINT "ledger_transfer_kind_check" CHECK ("kind" IN (
  'earn_cashback', 'earn_branded', 'spend_branded', 'expire_branded', 'clawback_cashback', 'clawback_branded',
  'adjust_credit_cashback', 'adjust_credit_branded', 'adjust_debit_cashback', 'adjust_debit_branded',
  'adjust_debit_cashback_owed',
  'payout_cashback', 'clawback_cashback_owed', 'repay_cashback_owed', 'write_off_cashback_owed',
  'issuer_share_cashback', 'issuer_share_branded', 'issuer_share_returned', 'commission_charged', 'commission_returned',
  'merchant_payment')) NOT VALID;

-- A refund taking back a claim's branded credit that was spent takes its value from cashback, as
-- a negative cashback adjustment marked like the shortfall of an earned reward's.
ALTER TABLE "reward_event" DROP CONSTRAINT "reward_event_shortfall_type_check";
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_shortfall_type_check"
  CHECK (NOT "covers_branded_shortfall" OR "type" IN ('cashback_clawed_back', 'cashback_adjusted')) NOT VALID;

-- A claim filed with an Idempotency-Key keeps it, written with the claim in one commit: a retry
-- after the API died between that commit and its answer finds the claim, not a second one.
ALTER TABLE "claim" ADD COLUMN "idempotency_key" TEXT;
ALTER TABLE "claim" ADD COLUMN "request_hash" TEXT;
