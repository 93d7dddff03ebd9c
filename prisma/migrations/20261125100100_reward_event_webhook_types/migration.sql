-- The cardholder reward events (core/webhooks/reward-events.ts) are webhook records like the
-- purchase webhooks: the type CHECK of 20261122040000_webhooks admitted only those two, so
-- every reward event record failed the transaction of its fact (the notices scan, a grant's
-- expiry, a refund's clawback, a preview's lapse). The list is core/webhooks/payloads.ts's
-- WEBHOOK_TYPES.
ALTER TABLE "webhook" DROP CONSTRAINT "webhook_type_check";
ALTER TABLE "webhook" ADD CONSTRAINT "webhook_type_check"
  CHECK ("type" IN ('qualified_auth', 'qualified_settlement', 'reward_available', 'reward_expiring', 'reward_expired',
                    'reward_clawed_back', 'authorization_lapsed'));
