-- The CHECKs 20261128100000_cashback_payouts widened NOT VALID, validated: every row is read, under
-- a lock that lets reads and writes go on (SHARE UPDATE EXCLUSIVE), so the planner and the next
-- reader may rely on them.
ALTER TABLE "ledger_account" VALIDATE CONSTRAINT "ledger_account_kind_check";
ALTER TABLE "ledger_account" VALIDATE CONSTRAINT "ledger_account_normal_side_check";
ALTER TABLE "ledger_account" VALIDATE CONSTRAINT "ledger_account_shape_check";
ALTER TABLE "ledger_account" VALIDATE CONSTRAINT "ledger_account_owed_nonnegative_check";
ALTER TABLE "ledger_transfer" VALIDATE CONSTRAINT "ledger_transfer_kind_check";
ALTER TABLE "reward_event" VALIDATE CONSTRAINT "reward_event_type_check";
ALTER TABLE "reward_event" VALIDATE CONSTRAINT "reward_event_amount_minor_check";
ALTER TABLE "reward_total" VALIDATE CONSTRAINT "reward_total_amount_minor_check";
ALTER TABLE "webhook" VALIDATE CONSTRAINT "webhook_type_check";
ALTER TABLE "adjustment" VALIDATE CONSTRAINT "adjustment_reason_code_check";
