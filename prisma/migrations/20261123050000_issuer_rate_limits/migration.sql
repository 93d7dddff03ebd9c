-- Per-issuer rate-limit overrides (issue 13, finding 4). NULL means the deployment's
-- published default (RATE_LIMIT_REQUESTS_PER_SECOND / RATE_LIMIT_EVENTS_PER_SECOND); a value
-- replaces it for every token of the issuer. The bounds match the operator API's schema.
ALTER TABLE "issuer" ADD COLUMN "rate_limit_requests_per_second" INTEGER;
ALTER TABLE "issuer" ADD COLUMN "rate_limit_events_per_second" INTEGER;
ALTER TABLE "issuer" ADD CONSTRAINT "issuer_rate_limit_requests_check"
  CHECK ("rate_limit_requests_per_second" BETWEEN 1 AND 1000000);
ALTER TABLE "issuer" ADD CONSTRAINT "issuer_rate_limit_events_check"
  CHECK ("rate_limit_events_per_second" BETWEEN 1 AND 10000000);
