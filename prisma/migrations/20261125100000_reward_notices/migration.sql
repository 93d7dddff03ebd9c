-- Cardholder reward events that follow time: a grant's balance becoming available, and the
-- approach of its expiry (docs/decisions/0028-reward-notices-by-scan.md).

-- The issuer's notice lead times before a grant expires, in days, largest first; '{}' for none.
ALTER TABLE "issuer" ADD COLUMN "expiry_notice_days" INTEGER[] NOT NULL DEFAULT '{30,7}';

-- Per grant, which notices it has had and when the next is due. The scan reads only grants
-- whose next_notice_at has passed (the partial index below), so its cost is per notice, not
-- per grant held.
ALTER TABLE "reward_grant" ADD COLUMN "available_noticed_at" TIMESTAMPTZ(3);
-- The smallest lead time (days) whose notice was handled; NULL before the first.
ALTER TABLE "reward_grant" ADD COLUMN "expiry_noticed_days" INTEGER;
ALTER TABLE "reward_grant" ADD COLUMN "next_notice_at" TIMESTAMPTZ(3);
CREATE INDEX "reward_grant_next_notice_idx" ON "reward_grant"("next_notice_at") WHERE "next_notice_at" IS NOT NULL;

-- Grants that exist now: one whose availability is past counts as noticed (it became
-- spendable before these events existed); every grant with value left and time to run is
-- looked at by the first scan, which sends the expiry notice of the window it is in, if its
-- issuer's endpoint subscribes, and plans the next.
UPDATE "reward_grant"
   SET "available_noticed_at" = CASE WHEN "available_at" <= now() THEN "available_at" END,
       "next_notice_at" = GREATEST("available_at", now())
 WHERE "remaining_minor" > 0 AND "expires_at" > now();

-- The webhook types of cardholder reward events (core/webhooks/reward-events.ts).
ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check" CHECK ("type" IN (
  'qualified_auth', 'qualified_settlement',
  'reward_available', 'reward_expiring', 'reward_expired', 'reward_clawed_back', 'authorization_lapsed'));
