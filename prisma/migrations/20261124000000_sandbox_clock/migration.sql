-- Sandbox test clock (issue 15, item 3). How far a sandbox issuer's simulated clock runs ahead
-- of real time, in milliseconds; it only ever grows (POST /api/v2/sandbox/clock/advance).
-- Reads and postings of that issuer take "now" as real time plus this offset. Production
-- issuers keep 0, and the CHECK makes that a database rule rather than a code convention.
-- The bound (about 20 years) keeps every shifted date far inside PostgreSQL's and JavaScript's range.
ALTER TABLE "issuer" ADD COLUMN "clock_offset_ms" BIGINT NOT NULL DEFAULT 0;
ALTER TABLE "issuer" ADD CONSTRAINT "issuer_clock_offset_check"
  CHECK ("clock_offset_ms" BETWEEN 0 AND 631152000000 AND ("clock_offset_ms" = 0 OR "environment" = 'sandbox'));
