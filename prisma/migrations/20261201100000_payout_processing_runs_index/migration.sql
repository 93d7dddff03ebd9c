-- migrate: no transaction
-- The worker's watch for rows whose workflow was never started (core/domain/run-starts.ts) reads
-- the processing payout runs every minute; payout has a row per run and per group cash-out, so
-- they are found through this partial index instead of the whole table. Built concurrently, so
-- cash-outs go on meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "payout_processing_run_idx" ON "payout"("created_at", "id") WHERE "kind" = 'run' AND "status" = 'processing';
