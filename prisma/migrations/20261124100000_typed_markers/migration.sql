-- Explicit columns for what the code used to find by parsing strings (issue 16, item 3).
--
-- 1. A refund's clawback from the group's cashback of branded value the purchase's grants no
--    longer held (README, "Clawback after spend") is a `cashback_clawed_back` event that the
--    purchase's history counts as branded value clawed back. It was recognised by the suffix of
--    its idempotency key; now it says so. The key stays what it was (`refund:<id>:` +
--    `branded_shortfall_from_cashback`), so a refund retried across this change posts nothing twice.
--    Reward events are immutable (trigger reward_event_no_update_or_delete): the trigger is set
--    aside for this one backfill, inside this migration's transaction, whose ALTER TABLE holds
--    the table's exclusive lock, so no other writer can slip a change past it.
ALTER TABLE "reward_event" ADD COLUMN "covers_branded_shortfall" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "reward_event" DISABLE TRIGGER "reward_event_no_update_or_delete";
UPDATE "reward_event" SET "covers_branded_shortfall" = true
 WHERE "type" = 'cashback_clawed_back' AND "idempotency_key" LIKE 'refund:%:branded\_shortfall\_from\_cashback';
ALTER TABLE "reward_event" ENABLE TRIGGER "reward_event_no_update_or_delete";
ALTER TABLE "reward_event" ADD CONSTRAINT "reward_event_shortfall_type_check"
  CHECK (NOT "covers_branded_shortfall" OR "type" = 'cashback_clawed_back');

-- 2. A webhook attempt's error class (`http_status`, `timeout`, `destination_refused`, ...)
--    decides whether the webhook can still be delivered and is shown per attempt; it was the
--    text before the first colon of `error`. Existing rows get exactly that, so the API shows
--    the same class for them as before.
ALTER TABLE "webhook_attempt" ADD COLUMN "error_class" TEXT;
UPDATE "webhook_attempt" SET "error_class" = split_part("error", ':', 1) WHERE "error" IS NOT NULL;
ALTER TABLE "webhook_attempt" ADD CONSTRAINT "webhook_attempt_error_class_check"
  CHECK (("error_class" IS NULL) = ("error" IS NULL));
