-- A step that processes an event while a refused hand-over puts the event's row back to wait
-- (readmitRefused) must still take the row out of the queue. The previous function looked at the
-- row twice under two snapshots: its DELETE saw the row still admitted, and its UPDATE, having
-- waited for the put-back to commit, found it no longer admitted; the row was left waiting, never
-- processed, for an event that was, and stood before its issuer's newer events until the
-- hand-over watch came round. Now the row is locked once (the UPDATE waits for a put-back and
-- reads its result), then deleted if nothing admitted it: no workflow holds a place for it.
CREATE OR REPLACE FUNCTION "handover_pending_processed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  admitted TIMESTAMPTZ(3);
BEGIN
  IF NOT (NEW.reward_status = 'pending'
          OR (NEW.kind = 'auth' AND NEW.state = 'reversed' AND NEW.reward_status IN ('previewed', 'not_matched'))) THEN
    UPDATE "handover_pending" SET "processed_at" = now()
     WHERE "event_id" = NEW.id AND "processed_at" IS NULL
    RETURNING "admitted_at" INTO admitted;
    IF FOUND AND admitted IS NULL THEN
      DELETE FROM "handover_pending" WHERE "event_id" = NEW.id;
    END IF;
  END IF;
  RETURN NULL;
END $$;
