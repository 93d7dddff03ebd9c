-- How long an issuer's webhook records (bodies, deliveries, attempts) are kept, from their
-- created_at (API.md, "Card data and erasure"; docs/decisions/0056-webhook-retention.md): the
-- hourly webhook retention run deletes them past it, once every delivery has ended. A constant
-- default is stored in the catalogue, so adding the column rewrites nothing; its CHECK reads the
-- issuer table, one row per issuer.
ALTER TABLE "issuer" ADD COLUMN "webhook_retention_days" INTEGER NOT NULL DEFAULT 30
  CONSTRAINT "issuer_webhook_retention_days_check" CHECK ("webhook_retention_days" BETWEEN 1 AND 3650);
