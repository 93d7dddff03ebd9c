-- Refunds and settlements in another currency than the purchase or authorization they name
-- are refused at ingestion from this release on (reasonCode currency_mismatch). Events stored
-- before are only reported, by this migration's data step (prisma/data-steps.ts): the report is
-- kept in _prisma_migrations.logs and printed by the migration runner. No posting is rewritten.
COMMENT ON COLUMN "ingested_event"."currency" IS
  'ISO 4217 code, lowercase. A refund or settlement shares its purchase''s or authorization''s currency (currency_mismatch otherwise).';
