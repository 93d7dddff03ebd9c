-- Several webhook endpoints per issuer, each with its own deliveries, health and status
-- (docs/decisions/0029-webhook-deliveries-per-endpoint.md).

-- An endpoint is named by its own id now. The endpoint each issuer had becomes its first
-- endpoint (the oldest), which the singular /api/v2/webhook-endpoint routes keep addressing.
ALTER TABLE "webhook_endpoint" ADD COLUMN "id" TEXT;
UPDATE "webhook_endpoint" SET "id" = 'whe_' || gen_random_uuid()::text;
ALTER TABLE "webhook_endpoint" ALTER COLUMN "id" SET NOT NULL;
ALTER TABLE "webhook_endpoint" DROP CONSTRAINT "webhook_endpoint_pkey";
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_pkey" PRIMARY KEY ("id");
CREATE INDEX "webhook_endpoint_issuer_idx" ON "webhook_endpoint"("issuer_id", "created_at", "id");

ALTER TABLE "webhook_endpoint" ADD COLUMN "description" TEXT NOT NULL DEFAULT '';
ALTER TABLE "webhook_endpoint" ADD COLUMN "status" TEXT NOT NULL DEFAULT 'enabled';
-- 'failing': disabled by the service after WEBHOOK_ENDPOINT_DISABLE_AFTER of failures only;
-- 'manual': disabled by the issuer (PATCH status).
ALTER TABLE "webhook_endpoint" ADD COLUMN "disabled_reason" TEXT;
ALTER TABLE "webhook_endpoint" ADD COLUMN "disabled_at" TIMESTAMPTZ(3);
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_status_check" CHECK (
  ("status" = 'enabled' AND "disabled_reason" IS NULL AND "disabled_at" IS NULL) OR
  ("status" = 'disabled' AND "disabled_reason" IN ('failing', 'manual') AND "disabled_at" IS NOT NULL));
-- Health, updated by every attempt's record: failing_since is the first failure of the
-- current run of failures (NULL after a success).
ALTER TABLE "webhook_endpoint" ADD COLUMN "consecutive_failures" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "webhook_endpoint" ADD COLUMN "failing_since" TIMESTAMPTZ(3);
ALTER TABLE "webhook_endpoint" ADD COLUMN "last_success_at" TIMESTAMPTZ(3);
ALTER TABLE "webhook_endpoint" ADD COLUMN "last_failure_at" TIMESTAMPTZ(3);
-- First attempts per second the relays send it at most; NULL: bounded by concurrency only.
ALTER TABLE "webhook_endpoint" ADD COLUMN "rate_limit_per_second" INTEGER;
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_rate_limit_check"
  CHECK ("rate_limit_per_second" IS NULL OR "rate_limit_per_second" BETWEEN 1 AND 1000);

-- The operator's per-issuer override of WEBHOOK_ENDPOINT_DISABLE_AFTER: NULL for the
-- deployment's setting, 'never', or a duration such as '5d' (core/duration.ts).
ALTER TABLE "issuer" ADD COLUMN "webhook_endpoint_disable_after" TEXT;

-- Test events (POST /api/v2/webhook-endpoints/{id}/test) carry "test": true in the envelope.
ALTER TABLE "webhook" ADD COLUMN "test" BOOLEAN NOT NULL DEFAULT false;

-- One delivery per webhook and endpoint: its status, attempts and outbox state. The webhook
-- row is the event; what used to be its delivery state moves here.
CREATE TABLE "webhook_delivery" (
    "webhook_id" TEXT NOT NULL,
    "endpoint_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    -- Outbox state of the relay's attempt (worker/webhook-relay.ts).
    "relayed_at" TIMESTAMPTZ(3),
    "relay_claimed_until" TIMESTAMPTZ(3),
    -- The number of the attempt the relay makes for this outbox entry: 1 for a new delivery,
    -- the next one after a recover; fixed while the entry waits, so a relay that dies after its
    -- attempt was recorded finds the record instead of sending again.
    "relay_attempt_number" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    CONSTRAINT "webhook_delivery_pkey" PRIMARY KEY ("webhook_id", "endpoint_id"),
    -- No foreign key to the endpoint: a deleted endpoint's deliveries stay as history.
    CONSTRAINT "webhook_delivery_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhook"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "webhook_delivery_status_check" CHECK ("status" IN ('pending', 'delivering', 'delivered', 'failed', 'skipped'))
);
-- The outbox: per endpoint, oldest first, so a claim takes a few rows of each endpoint
-- however long one endpoint's backlog is.
CREATE INDEX "webhook_delivery_outbox_idx" ON "webhook_delivery"("endpoint_id", "created_at") WHERE "relayed_at" IS NULL;
-- recover: an endpoint's failed or skipped deliveries in a window. Partial, so the deliveries
-- that succeed (nearly all) never enter it.
CREATE INDEX "webhook_delivery_recoverable_idx" ON "webhook_delivery"("endpoint_id", "created_at")
  WHERE "status" IN ('failed', 'skipped');

INSERT INTO "webhook_delivery" ("webhook_id", "endpoint_id", "issuer_id", "status", "attempt_count", "last_attempt_at",
                                "next_attempt_at", "delivered_at", "relayed_at", "relay_claimed_until", "created_at", "updated_at")
SELECT w."id", ep."id", w."issuer_id", w."status", w."attempt_count", w."last_attempt_at", w."next_attempt_at",
       w."delivered_at", w."relayed_at", w."relay_claimed_until", w."created_at", w."updated_at"
  FROM "webhook" w JOIN "webhook_endpoint" ep ON ep."issuer_id" = w."issuer_id";

-- Attempts belong to a delivery. Those made before endpoints had ids were made to the
-- issuer's one endpoint; those of an issuer that had none (not_configured) keep NULL.
ALTER TABLE "webhook_attempt" ADD COLUMN "endpoint_id" TEXT;
UPDATE "webhook_attempt" a SET "endpoint_id" = ep."id"
  FROM "webhook" w JOIN "webhook_endpoint" ep ON ep."issuer_id" = w."issuer_id"
 WHERE w."id" = a."webhook_id";
DROP INDEX "webhook_attempt_webhook_id_attempt_number_key";
CREATE UNIQUE INDEX "webhook_attempt_delivery_number_key" ON "webhook_attempt"("webhook_id", "endpoint_id", "attempt_number") NULLS NOT DISTINCT;

-- The webhook's delivery state now lives in its deliveries. The webhook's own columns stay
-- for the previous release while a rolling upgrade runs both (docs/operating/upgrading.md):
-- its APIs still read them, its workers still write them. This release neither reads nor
-- maintains them; the next release's migration drops them with the trigger below.
-- A webhook the previous release's relays could still claim is marked relayed, and so is every
-- webhook written from now on: only this release's relays deliver, from webhook_delivery.
UPDATE "webhook" SET "relayed_at" = now(), "relay_claimed_until" = NULL WHERE "relayed_at" IS NULL;
ALTER TABLE "webhook" ALTER COLUMN "relayed_at" SET DEFAULT now();

-- A webhook written by a worker of the previous release has no deliveries: at its commit, this
-- gives it one per subscribing endpoint, as this release writes them, and wakes the relays.
-- This release writes its deliveries with the webhook and says so (deliveries_written), so
-- the trigger never fires for its webhooks.
ALTER TABLE "webhook" ADD COLUMN "deliveries_written" BOOLEAN NOT NULL DEFAULT false;
CREATE FUNCTION "webhook_deliveries_of_previous_release"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "webhook_delivery" WHERE "webhook_id" = NEW."id") THEN
    INSERT INTO "webhook_delivery" ("webhook_id", "endpoint_id", "issuer_id", "status", "relayed_at", "created_at", "updated_at")
    SELECT NEW."id", ep."id", NEW."issuer_id", CASE WHEN ep."status" = 'disabled' THEN 'skipped' ELSE 'pending' END,
           CASE WHEN ep."status" = 'disabled' THEN NEW."created_at" END, NEW."created_at", NEW."created_at"
      FROM "webhook_endpoint" ep
     WHERE ep."issuer_id" = NEW."issuer_id" AND NEW."type" = ANY (ep."enabled_types")
    ON CONFLICT DO NOTHING;
    IF FOUND THEN PERFORM pg_notify('rewards_webhook_outbox', ''); END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER "webhook_deliveries_of_previous_release" AFTER INSERT ON "webhook"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NOT NEW."deliveries_written")
  EXECUTE FUNCTION "webhook_deliveries_of_previous_release"();

ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check" CHECK ("type" IN (
  'qualified_auth', 'qualified_settlement',
  'reward_available', 'reward_expiring', 'reward_expired', 'reward_clawed_back', 'authorization_lapsed',
  'endpoint_disabled'));
