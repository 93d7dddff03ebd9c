-- Webhook delivery: one attempt row per (webhook, attempt number), so an attempt whose
-- outcome is recorded twice (a lost activity completion, then the workflow's fallback
-- record) stays one row. The unique index replaces the plain one of the same columns.

DROP INDEX "webhook_attempt_webhook_id_idx";
CREATE UNIQUE INDEX "webhook_attempt_webhook_id_attempt_number_key" ON "webhook_attempt"("webhook_id", "attempt_number");
