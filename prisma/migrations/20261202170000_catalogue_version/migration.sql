-- The catalogue's version (decision 0050): one row whose number moves once in every transaction
-- that changes an offer or a merchant, in that transaction. An API process keeps each issuer's
-- offers in memory and reads this number in the same statement as a group's enrolments: the same
-- number means the same committed catalogue, so what it shows is exactly what the database holds.
-- The triggers are deferred to the commit, so the row is the last lock such a transaction takes
-- (two writers of the catalogue cannot deadlock over it) and is held only while it commits. The
-- offer and merchant tables are the catalogue's and small; no busy table is locked.
CREATE TABLE "catalogue_version" (
    "id" INTEGER NOT NULL,
    "version" BIGINT NOT NULL,
    CONSTRAINT "catalogue_version_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "catalogue_version_one_row" CHECK ("id" = 1)
);
INSERT INTO "catalogue_version" ("id", "version") VALUES (1, 1);

CREATE FUNCTION catalogue_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Once per transaction, however many rows it changed (a catalogue import writes thousands).
  IF current_setting('rewards.catalogue_changed', true) IS DISTINCT FROM 'on' THEN
    UPDATE "catalogue_version" SET "version" = "version" + 1 WHERE "id" = 1;
    PERFORM set_config('rewards.catalogue_changed', 'on', true);
  END IF;
  RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER "offer_catalogue_changed" AFTER INSERT OR UPDATE OR DELETE ON "offer"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION catalogue_changed();
CREATE CONSTRAINT TRIGGER "merchant_catalogue_changed" AFTER INSERT OR UPDATE OR DELETE ON "merchant"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION catalogue_changed();
-- A constraint trigger cannot watch TRUNCATE; a statement trigger can.
CREATE TRIGGER "offer_catalogue_truncated" AFTER TRUNCATE ON "offer"
  FOR EACH STATEMENT EXECUTE FUNCTION catalogue_changed();
CREATE TRIGGER "merchant_catalogue_truncated" AFTER TRUNCATE ON "merchant"
  FOR EACH STATEMENT EXECUTE FUNCTION catalogue_changed();
