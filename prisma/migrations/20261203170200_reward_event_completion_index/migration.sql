-- migrate: no transaction
-- A refund finds the completion it takes back by offer, group and number: a partial index of the
-- few completion events, built without blocking writes to reward_event.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "reward_event_completion_idx" ON "reward_event" ("offer_id", "chg_id", "completion")
  WHERE "completion" IS NOT NULL;
