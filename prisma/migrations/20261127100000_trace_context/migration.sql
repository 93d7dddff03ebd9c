-- Trace context kept with the rows another process picks up (core/tracing.ts): the hand-over
-- queue (a worker's hand-over watch or the sweeper may hand an event over instead of the API
-- that stored it) and the webhook (the relay makes its first attempt). A W3C traceparent, null
-- when the writer was not tracing, so the workflow's and the attempt's spans join the trace of
-- the request that started it. Additive: the previous release neither reads nor writes them.
ALTER TABLE "handover_pending" ADD COLUMN "traceparent" TEXT;
ALTER TABLE "webhook" ADD COLUMN "traceparent" TEXT;
