-- Running totals of reward events per group, merchant, offer and type, written in the same
-- statement or transaction as the events (activities/ledger/batch.ts, reward-events.ts). Reads
-- that used to sum a group's whole history (the rewards summary; the per-group offer caps a
-- settlement and the eligibility check apply) read a few rows instead, however long the
-- history. Reward events are immutable (the trigger below refuses changes), so a total only
-- ever grows with inserts, and every total equals the sum of its events (ledgerInvariants,
-- checked after every test scenario and every generated history of the property test).
-- '' stands for "no merchant" and "no offer" in the key.
CREATE TABLE "reward_total" (
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "merchant_id" TEXT NOT NULL,
    "offer_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "amount_minor" BIGINT NOT NULL,
    "event_count" BIGINT NOT NULL,
    CONSTRAINT "reward_total_pkey" PRIMARY KEY ("issuer_id", "chg_id", "merchant_id", "offer_id", "type"),
    CONSTRAINT "reward_total_amount_minor_check" CHECK ("amount_minor" >= 0)
);

CREATE FUNCTION reward_event_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'reward events are immutable: record a new one (a clawback) instead';
END $$;

CREATE TRIGGER "reward_event_no_update_or_delete" BEFORE UPDATE OR DELETE ON "reward_event"
  FOR EACH ROW EXECUTE FUNCTION reward_event_immutable();

INSERT INTO "reward_total" (issuer_id, chg_id, merchant_id, offer_id, type, amount_minor, event_count)
SELECT issuer_id, chg_id, coalesce(merchant_id, ''), coalesce(offer_id, ''), type, sum(amount_minor), count(*)
  FROM "reward_event" GROUP BY 1, 2, 3, 4, 5;

-- The summary's other reads, each bounded by recent activity rather than history: branded
-- balances per group, grants not yet available (earned within the availability delay), grants
-- past expiry that the hourly job has not swept, and authorizations still previewed.
CREATE INDEX "ledger_account_issuer_id_chg_id_idx" ON "ledger_account"("issuer_id", "chg_id");
CREATE INDEX "reward_grant_open_available_idx" ON "reward_grant"("issuer_id", "chg_id", "available_at") WHERE "remaining_minor" > 0;
CREATE INDEX "reward_grant_open_expires_idx" ON "reward_grant"("issuer_id", "chg_id", "expires_at") WHERE "remaining_minor" > 0;
CREATE INDEX "ingested_event_previewed_idx" ON "ingested_event"("issuer_id", "chg_id") WHERE "kind" = 'auth' AND "reward_status" = 'previewed';
