-- migrate: no transaction
-- The webhook type CHECK 20261203110000_chg_erasure widened, validated under a lock that lets
-- reads and writes go on (SHARE UPDATE EXCLUSIVE).
ALTER TABLE "webhook" VALIDATE CONSTRAINT "webhook_type_check";
-- The events stored before ingestion stopped keeping the issuer's card references in the payload
-- (cardholderId, cardId and cardLast4 as sent): an erasure finds a group's among them by this
-- index. Events stored since carry no cardLast4, so none enters it and ingestion pays nothing
-- for it; each erasure takes its group's rows out. Built concurrently: the table is large and busy.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "ingested_event_card_references_idx" ON "ingested_event"("chg_id") WHERE "payload" ? 'cardLast4';
