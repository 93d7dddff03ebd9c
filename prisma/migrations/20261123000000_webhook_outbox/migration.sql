-- The webhook table is also the outbox of first delivery attempts: the worker's relay
-- (worker/webhook-relay.ts) claims rows not yet relayed, makes the first attempt and, when it
-- fails, hands the webhook to its WebhookDelivery workflow. `relay_claimed_until` lets several
-- relays share the table (a claim that outlives its relay expires); `relayed_at` is when the
-- relay was done with the row.
ALTER TABLE "webhook" ADD COLUMN "relayed_at" TIMESTAMPTZ(3);
ALTER TABLE "webhook" ADD COLUMN "relay_claimed_until" TIMESTAMPTZ(3);

-- Rows the earlier design already attempted belong to their delivery workflows. Rows never
-- attempted are left to the relay: their lifecycle may have stopped before starting a delivery.
UPDATE "webhook" SET "relayed_at" = "updated_at" WHERE "attempt_count" > 0 OR "status" <> 'pending';

CREATE INDEX "webhook_outbox_idx" ON "webhook"("created_at") WHERE "relayed_at" IS NULL;
