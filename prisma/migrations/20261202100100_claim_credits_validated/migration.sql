-- The CHECKs 20261202100000_claim_credits widened NOT VALID, validated under a lock that
-- lets reads and writes go on (SHARE UPDATE EXCLUSIVE).
ALTER TABLE "ledger_transfer" VALIDATE CONSTRAINT "ledger_transfer_kind_check";
ALTER TABLE "reward_event" VALIDATE CONSTRAINT "reward_event_shortfall_type_check";
