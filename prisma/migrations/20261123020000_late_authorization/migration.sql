-- An authorization that arrives after its purchase was settled is recorded against the
-- settlement (no preview, no webhook) with its own status.
ALTER TABLE "ingested_event" DROP CONSTRAINT "ingested_event_reward_status_check";
ALTER TABLE "ingested_event" ADD CONSTRAINT "ingested_event_reward_status_check"
  CHECK ("reward_status" IN ('pending', 'matched', 'not_matched', 'reversed', 'unknown', 'previewed', 'lapsed', 'voided', 'after_settlement'));
