-- migrate: no transaction
-- A payout run walks the issuer's cashback accounts in id order (core/domain/payouts.ts, nextChunk).
-- ledger_account has a row per group and merchant: built concurrently, so writes go on meanwhile.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "ledger_account_issuer_id_kind_id_idx" ON "ledger_account"("issuer_id", "kind", "id");
