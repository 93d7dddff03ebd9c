-- Webhook signing secrets sealed at rest, step 2 of 2. prisma/migrate.ts runs the data step of
-- this migration (prisma/data-steps.ts) first, in the same transaction: every row still in
-- plaintext is sealed under the first key of WEBHOOK_SECRET_KEYS. A runner without that step
-- (`prisma migrate deploy`) stops here on a database with endpoints, rather than drop secrets
-- that nothing could sign with again.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM "webhook_endpoint" WHERE "secret_ciphertext" IS NULL) THEN
    RAISE EXCEPTION 'webhook_endpoint rows hold plaintext secrets only: apply this migration with prisma/migrate.ts (npm start) and WEBHOOK_SECRET_KEYS set';
  END IF;
END $$;

ALTER TABLE "webhook_endpoint" DROP COLUMN "secret", DROP COLUMN "previous_secret";
ALTER TABLE "webhook_endpoint" ALTER COLUMN "secret_key_id" SET NOT NULL, ALTER COLUMN "secret_ciphertext" SET NOT NULL;
-- The key id as core/crypto/key-ring.ts accepts it; a sealed box is a 12-byte IV, a 16-byte
-- tag and the ciphertext (core/crypto/sealed-box.ts).
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_secret_key_id_check"
  CHECK ("secret_key_id" ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$');
ALTER TABLE "webhook_endpoint" ADD CONSTRAINT "webhook_endpoint_secret_sealed_check"
  CHECK (octet_length("secret_ciphertext") > 28 AND octet_length(coalesce("previous_secret_ciphertext", "secret_ciphertext")) > 28);
