-- The webhook type CHECK 20261202130300_offer_available_webhook widened, validated under a lock
-- that lets reads and writes go on (SHARE UPDATE EXCLUSIVE).
ALTER TABLE "webhook" VALIDATE CONSTRAINT "webhook_type_check";
