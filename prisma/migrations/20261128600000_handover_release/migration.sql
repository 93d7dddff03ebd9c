-- A purchase holds its place under the hand-over bound until its workflow has gone idle (closed,
-- or waiting for its next event), not only until its step commits: the workflow task that closes
-- the run after the commit still loads Temporal and the worker (decision 0037). The step's
-- transaction now marks an admitted row processed; the worker deletes it once the workflow has
-- gone idle (worker/handover-release.ts), and the sweep deletes a processed row whose release was
-- lost (a worker that died in between). A row never admitted is deleted at once, as before: no
-- workflow holds a place for it.
ALTER TABLE "handover_pending" ADD COLUMN "processed_at" TIMESTAMPTZ(3);

CREATE OR REPLACE FUNCTION "handover_pending_processed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (NEW.reward_status = 'pending'
          OR (NEW.kind = 'auth' AND NEW.state = 'reversed' AND NEW.reward_status IN ('previewed', 'not_matched'))) THEN
    DELETE FROM "handover_pending" WHERE "event_id" = NEW.id AND "admitted_at" IS NULL;
    UPDATE "handover_pending" SET "processed_at" = now()
     WHERE "event_id" = NEW.id AND "admitted_at" IS NOT NULL AND "processed_at" IS NULL;
  END IF;
  RETURN NULL;
END $$;
