-- Admission control at the hand-over (docs/decisions/0037-admission-at-the-hand-over.md): an
-- event in handover_pending either waits (admitted_at NULL) or has been handed to Temporal and
-- its purchase's step has not committed yet (admitted_at set). Only a bounded number are
-- admitted at once; the rest wait here, oldest first per issuer, issuers taken in turn.
ALTER TABLE "handover_pending" ADD COLUMN "issuer_id" TEXT;
ALTER TABLE "handover_pending" ADD COLUMN "admitted_at" TIMESTAMPTZ(3);

-- Rows queued before this release: their issuer, from the event. An API of the previous release
-- still inserts rows without it during a roll; the sweep fills those in (activities/sweeper.ts).
UPDATE "handover_pending" p SET "issuer_id" = e."issuer_id" FROM "ingested_event" e WHERE e."id" = p."event_id";

-- The waiting events of each issuer, oldest first: the admission's turn over issuers, and the
-- per-issuer count behind 429 backlog_full and GET /api/v2/ingestion/lag.
CREATE INDEX "handover_pending_waiting_idx" ON "handover_pending"("issuer_id", "queued_at", "event_id")
  WHERE "admitted_at" IS NULL;
-- The events handed over and not yet finished: at most the bound of them, read at every admission.
CREATE INDEX "handover_pending_admitted_idx" ON "handover_pending"("admitted_at") WHERE "admitted_at" IS NOT NULL;

-- Whose turn it is: the issuer the last admission took an event from last. The next one starts
-- with the issuers after it, so issuers with as many purchases in flight take turns (one row).
CREATE TABLE "handover_turn" (
    "id" INTEGER NOT NULL,
    "last_issuer_id" TEXT,
    CONSTRAINT "handover_turn_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "handover_turn_one_row" CHECK ("id" = 1)
);
INSERT INTO "handover_turn" ("id", "last_issuer_id") VALUES (1, NULL);

-- The operator's override of INGESTION_BACKLOG_LIMIT for this issuer; NULL = the deployment's.
ALTER TABLE "issuer" ADD COLUMN "ingestion_backlog_limit" INTEGER;
ALTER TABLE "issuer" ADD CONSTRAINT "issuer_ingestion_backlog_limit_check"
  CHECK ("ingestion_backlog_limit" IS NULL OR "ingestion_backlog_limit" BETWEEN 1 AND 100000000);

-- A processed event leaves the queue in the transaction that processes it, whichever step (and
-- whichever release's worker) that is: the bound then counts exactly the admitted rows. Only a
-- change of reward_status fires it; an event still awaiting processing (a reversal queued while
-- its authorization was being previewed) keeps its row.
CREATE FUNCTION "handover_pending_processed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT (NEW.reward_status = 'pending'
          OR (NEW.kind = 'auth' AND NEW.state = 'reversed' AND NEW.reward_status IN ('previewed', 'not_matched'))) THEN
    DELETE FROM "handover_pending" WHERE "event_id" = NEW.id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER "ingested_event_processed" AFTER UPDATE OF "reward_status" ON "ingested_event"
  FOR EACH ROW WHEN (OLD.reward_status IS DISTINCT FROM NEW.reward_status)
  EXECUTE FUNCTION "handover_pending_processed"();
