-- Webhook signing secrets sealed at rest (issue 13, finding 3), step 1 of 2: room for the
-- sealed secrets beside the plaintext ones. The secrets are sealed with AES-256-GCM under a
-- key from the environment (WEBHOOK_SECRET_KEYS), which SQL cannot see: prisma/migrate.ts seals
-- every existing row in the transaction of step 2 (prisma/data-steps.ts), which then drops the
-- plaintext columns. `secret_key_id` names the key, so the key can be rotated.
ALTER TABLE "webhook_endpoint" ADD COLUMN "secret_key_id" TEXT;
ALTER TABLE "webhook_endpoint" ADD COLUMN "secret_ciphertext" BYTEA;
ALTER TABLE "webhook_endpoint" ADD COLUMN "previous_secret_ciphertext" BYTEA;
