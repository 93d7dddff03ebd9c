-- Links a reward event to the offer that earned it (per-group caps, clawback of that
-- offer's earnings) and, for clawbacks and spends, to the refund or settlement event that
-- caused it, while transaction_id stays the purchase (txn_) the reward belongs to.
ALTER TABLE "reward_event" ADD COLUMN "offer_id" TEXT;
ALTER TABLE "reward_event" ADD COLUMN "source_event_id" TEXT;
CREATE INDEX "reward_event_transaction_id_idx" ON "reward_event"("transaction_id");
CREATE INDEX "reward_event_source_event_id_idx" ON "reward_event"("source_event_id");
CREATE INDEX "reward_event_offer_idx" ON "reward_event"("issuer_id", "chg_id", "offer_id") WHERE "offer_id" IS NOT NULL;
