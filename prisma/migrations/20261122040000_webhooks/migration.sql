-- Webhooks: each issuer's receiving endpoint, one record per webhook (`evt_`, written in
-- the same transaction as the effects it announces) and every delivery attempt.

CREATE TABLE "webhook_endpoint" (
    "issuer_id" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "enabled_types" TEXT[] NOT NULL,
    "secret" TEXT NOT NULL,
    "previous_secret" TEXT,
    "previous_secret_expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_endpoint_pkey" PRIMARY KEY ("issuer_id"),
    CONSTRAINT "webhook_endpoint_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE
);

CREATE TABLE "webhook" (
    "id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "source_event_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "data" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "attempt_count" INTEGER NOT NULL DEFAULT 0,
    "last_attempt_at" TIMESTAMPTZ(3),
    "next_attempt_at" TIMESTAMPTZ(3),
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "webhook_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_issuer_id_fkey" FOREIGN KEY ("issuer_id") REFERENCES "issuer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "webhook_type_check" CHECK ("type" IN ('qualified_auth', 'qualified_settlement')),
    CONSTRAINT "webhook_status_check" CHECK ("status" IN ('pending', 'delivering', 'delivered', 'failed'))
);
CREATE UNIQUE INDEX "webhook_idempotency_key_key" ON "webhook"("idempotency_key");
CREATE INDEX "webhook_issuer_list_idx" ON "webhook"("issuer_id", "created_at" DESC, "id" DESC);
CREATE INDEX "webhook_source_event_id_idx" ON "webhook"("source_event_id");

CREATE TABLE "webhook_attempt" (
    "id" TEXT NOT NULL,
    "webhook_id" TEXT NOT NULL,
    "attempt_number" INTEGER NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "status_code" INTEGER,
    "latency_ms" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "error" TEXT,
    CONSTRAINT "webhook_attempt_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "webhook_attempt_webhook_id_fkey" FOREIGN KEY ("webhook_id") REFERENCES "webhook"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "webhook_attempt_outcome_check" CHECK ("outcome" IN ('succeeded', 'failed'))
);
CREATE INDEX "webhook_attempt_webhook_id_idx" ON "webhook_attempt"("webhook_id", "attempt_number");
