-- migrate: no transaction
-- Built concurrently, so ingestion and rewards go on meanwhile: both tables are large and busy.
-- The lift report (api/lift/store.ts) reads a merchant's settled purchases over a window: without
-- this it reads every settled event of every merchant.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "ingested_event_merchant_settled_idx" ON "ingested_event"("merchant_id", "event_created_at") WHERE "kind" = 'settled' AND "state" = 'settled';
-- And what one offer paid over the window across every group: reward_event_offer_idx leads with
-- the issuer and the group, so it cannot serve that.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "reward_event_offer_occurred_idx" ON "reward_event"("offer_id", "occurred_at") WHERE "offer_id" IS NOT NULL;
