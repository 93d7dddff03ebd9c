-- The offer_available webhook (a group enrolled as treated in an auto offer). The type CHECK is
-- widened NOT VALID (no scan of the webhook table under its lock): every existing row already
-- meets the narrower one; validated by the next migration.
ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check" CHECK ("type" IN (
  'qualified_auth', 'qualified_settlement',
  'reward_available', 'reward_expiring', 'reward_expired', 'reward_clawed_back', 'authorization_lapsed',
  'endpoint_disabled', 'reward_adjusted', 'claim_resolved', 'cashback_paid_out', 'payout_completed',
  'offer_available')) NOT VALID;
