-- The hand-over queue (issue 11): events waiting for their hand-over to Temporal get one small
-- row here, inserted by the statement that stores them and deleted once Temporal has them.
-- Marking the hand-over used to UPDATE ingested_event.handed_over_at: a second version of
-- every wide row (payload and all), never a HOT one (the column is in a partial index's
-- predicate), so every index of the table got a second entry for every event. Deleting a
-- queue row only marks it dead; ingested_event keeps one version until its purchase is processed.
CREATE TABLE "handover_pending" (
    "event_id" TEXT NOT NULL,
    -- When the event was queued: stored, or reversed (a reversal is handed over again).
    "queued_at" TIMESTAMPTZ(3) NOT NULL,
    -- Hand-overs that Temporal refused; the sweeper keeps trying.
    "attempts" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "handover_pending_pkey" PRIMARY KEY ("event_id")
);
-- The sweeper reads the oldest first, past a grace period, in keyset pages.
CREATE INDEX "handover_pending_queued_at_idx" ON "handover_pending"("queued_at", "event_id");

-- Events waiting now move to the queue with their attempts.
INSERT INTO "handover_pending" ("event_id", "queued_at", "attempts")
SELECT "id", COALESCE("state_changed_at", "received_at"), "handover_attempts"
  FROM "ingested_event"
 WHERE "handed_over_at" IS NULL;
UPDATE "ingested_event" SET "handed_over_at" = COALESCE("state_changed_at", "received_at") WHERE "handed_over_at" IS NULL;

-- handed_over_at and handover_attempts are deprecated, not dropped: API processes of the
-- previous release keep running until the roll ends (README, "Upgrading") and still write
-- them. The new code stores every event with handed_over_at set (so the pending-hand-over
-- index only ever holds an old process's events), and the sweeper adopts such an event into
-- the queue. A later release drops both columns, that index and the adoption.
COMMENT ON COLUMN "ingested_event"."handed_over_at" IS
  'Deprecated (20261124110000_handover_queue): NULL only on events stored by the previous release and not yet handed over; handover_pending is the queue.';
COMMENT ON COLUMN "ingested_event"."handover_attempts" IS
  'Deprecated (20261124110000_handover_queue): handover_pending.attempts counts refused hand-overs.';
