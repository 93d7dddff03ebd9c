-- Ingested authorization and settled transaction events. A row is written in the request
-- that accepts the event ("accepted" means durably stored); handed_over_at records the
-- hand-over to Temporal, and the sweeper retries rows where it is still NULL.

CREATE TABLE "ingested_event" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "external_id" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "chg_id" TEXT NOT NULL,
    "cardholder_id" TEXT NOT NULL,
    "card_id" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "event_created_at" TIMESTAMPTZ(3) NOT NULL,
    "authorization_external_id" TEXT,
    "related_external_id" TEXT,
    "related_event_id" TEXT,
    "workflow_id" TEXT NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "state_changed_at" TIMESTAMPTZ(3),
    "handed_over_at" TIMESTAMPTZ(3),
    "handover_attempts" INTEGER NOT NULL DEFAULT 0,
    "reward_status" TEXT NOT NULL DEFAULT 'pending',
    "merchant_id" TEXT,
    "match_trace" JSONB,
    "processed_at" TIMESTAMPTZ(3),
    "failure_reason" TEXT,
    CONSTRAINT "ingested_event_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "ingested_event_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "ingested_event_kind_check" CHECK ("kind" IN ('auth', 'settled')),
    CONSTRAINT "ingested_event_amount_check" CHECK ("amount_minor" > 0),
    CONSTRAINT "ingested_event_reward_status_check" CHECK ("reward_status" IN ('pending', 'matched', 'not_matched', 'reversed', 'unknown', 'previewed', 'lapsed', 'voided'))
);
CREATE UNIQUE INDEX "ingested_event_issuer_id_kind_external_id_key" ON "ingested_event"("issuer_id", "kind", "external_id");
CREATE INDEX "ingested_event_issuer_id_chg_id_idx" ON "ingested_event"("issuer_id", "chg_id");
CREATE INDEX "ingested_event_workflow_id_idx" ON "ingested_event"("workflow_id");
-- The sweeper's work list stays small: only rows still waiting for their hand-over.
CREATE INDEX "ingested_event_pending_handover_idx" ON "ingested_event"("received_at") WHERE "handed_over_at" IS NULL;
