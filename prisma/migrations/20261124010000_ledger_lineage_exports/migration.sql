-- Ledger lineage and finance exports (issue 15, items 4 and 5).
-- The export walks an issuer's reward events by posted time in keyset pages
-- ((occurred_at, id) > last row), so each page is an index range scan however long the period.
CREATE INDEX "reward_event_export_idx" ON "reward_event"("issuer_id", "occurred_at", "id");
-- Each exported event names its transfer, and ledger lineage goes from a transaction's reward
-- events to their transfers: both look transfers up by reward event.
CREATE INDEX "ledger_transfer_reward_event_id_idx" ON "ledger_transfer"("reward_event_id");
-- An account's entries, newest first in keyset pages (id < last id): the composite index serves
-- both the filter and the order, and replaces the single-column one.
CREATE INDEX "ledger_entry_account_id_id_idx" ON "ledger_entry"("account_id", "id");
DROP INDEX "ledger_entry_account_id_idx";
