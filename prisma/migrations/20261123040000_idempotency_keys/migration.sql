-- Idempotency-Key (API.md, "Safety and integration"; issue 13, finding 5). One row per key a
-- caller sent on a POST, PUT, PATCH or DELETE, scoped to the caller's token, kept 24 hours.
-- A request claims its key by inserting the row (in_progress); when the handler has answered,
-- the row holds that answer (completed) and a retry with the same key and request is given it
-- again. The request is kept only as a fingerprint (method, path, SHA-256 of the canonical
-- body): a 1 MiB ingestion batch is never stored twice.
--
-- `response` is the answer's headers and body sealed with AES-256-GCM under a key derived from
-- the caller's own token (api/middleware/idempotency-store.ts): answers carry secrets shown once
-- (API tokens, webhook signing secrets), and a copy of the database must not reveal them.
-- `claim_id` names the request that holds an in_progress row, so only that request completes
-- or releases it; `locked_at` lets a retry take over a claim whose request died (lease).
CREATE TABLE "idempotency_key" (
  "scope"           TEXT           NOT NULL,
  "key"             TEXT           NOT NULL,
  "method"          TEXT           NOT NULL,
  "path"            TEXT           NOT NULL,
  "request_hash"    TEXT           NOT NULL,
  "status"          TEXT           NOT NULL,
  "claim_id"        TEXT           NOT NULL,
  "locked_at"       TIMESTAMPTZ(3) NOT NULL,
  "response_status" INTEGER,
  "response"        BYTEA,
  "created_at"      TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
  "expires_at"      TIMESTAMPTZ(3) NOT NULL,
  CONSTRAINT "idempotency_key_pkey" PRIMARY KEY ("scope", "key"),
  -- 1..255 visible ASCII characters, as the API checks before it stores anything.
  CONSTRAINT "idempotency_key_key_check" CHECK ("key" ~ '^[!-~]{1,255}$'),
  CONSTRAINT "idempotency_key_status_check" CHECK ("status" IN ('in_progress', 'completed')),
  -- A completed key always has an answer to replay; a running one never has.
  CONSTRAINT "idempotency_key_response_check"
    CHECK (("status" = 'completed') = ("response_status" IS NOT NULL AND "response" IS NOT NULL)),
  CONSTRAINT "idempotency_key_response_status_check"
    CHECK ("response_status" IS NULL OR "response_status" BETWEEN 100 AND 499),
  CONSTRAINT "idempotency_key_request_hash_check" CHECK ("request_hash" ~ '^[0-9a-f]{64}$')
);

-- The cleanup deletes expired keys oldest first.
CREATE INDEX "idempotency_key_expires_at_idx" ON "idempotency_key"("expires_at");
