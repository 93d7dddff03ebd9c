-- A card's BIN, the first 6 or 8 digits of its number (API.md, "Card data and erasure"): with
-- last4, the one truncation PCI DSS allows to be kept. Nullable, no default: adding it rewrites
-- nothing. Its format is the API's to check (a CHECK added here would scan every card under the
-- table's lock).
ALTER TABLE "card" ADD COLUMN "bin" TEXT;
