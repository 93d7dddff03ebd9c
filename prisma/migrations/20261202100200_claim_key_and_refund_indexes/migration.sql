-- migrate: no transaction
-- Built concurrently, so filing claims and ingesting events go on meanwhile.
-- One claim per issuer and Idempotency-Key (claims filed without one are not indexed).
CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS "claim_issuer_id_idempotency_key_key" ON "claim"("issuer_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
-- A purchase's refunds, which every refund's clawback and every claim reads: without it each read
-- scanned ingested_event. Only refunds (and reversals) name a related event.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "ingested_event_related_event_id_idx" ON "ingested_event"("related_event_id") WHERE "related_event_id" IS NOT NULL;
