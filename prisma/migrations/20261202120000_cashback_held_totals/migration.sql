-- What a group has on hold, kept as a running total instead of summed from every hold still in
-- its return window (a group's purchases of the last 30 days: thousands for a busy card), so
-- the rewards summary and the payout's split cost the same whatever the history
-- (docs/decisions/0045-cashback-held-running-total.md).
--
-- cashback_held, one row per group that has a hold: held_minor is the sum of remaining_minor of
-- its holds whose payable_at is after matured_through. What is on hold at any instant `at` is then
--   held_minor - (holds with payable_at in (matured_through, at])   when at >= matured_through,
--   held_minor + (holds with payable_at in (at, matured_through])   when at <  matured_through,
-- two range reads of cashback_hold_group_idx that hold only what matured since the last sweep:
-- exact for any `at` (a payout's asOf in the past, a sandbox clock years ahead), whatever the sweep
-- has done. The worker's sweep (core/domain/cashback-held.ts) moves matured_through forward to
-- each issuer's now, taking out what matured; next_payable_at (never later than the earliest hold
-- still counted) tells it which groups have something to take out.
--
-- Every writer of cashback_hold moves the total through the statement triggers below, in the
-- writer's own statement: the settlement's batch, a refund's release, a claim's upsert, any future
-- one. Only this table is created here, with the triggers; the totals of the existing holds are
-- written by 20261202120100_cashback_held_backfill, a batch of groups per transaction, so that no
-- writer of cashback_hold waits for the whole table to be read.
CREATE TABLE "cashback_held" (
    "issuer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "held_minor" BIGINT NOT NULL,
    "matured_through" TIMESTAMPTZ(3) NOT NULL,
    "next_payable_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "cashback_held_pkey" PRIMARY KEY ("issuer_id", "chg_id"),
    CONSTRAINT "cashback_held_held_minor_check" CHECK ("held_minor" >= 0)
);
-- The sweep's read: an issuer's groups with a hold that matured (an issuer at a time, each at its
-- own clock).
CREATE INDEX "cashback_held_next_payable_idx" ON "cashback_held"("issuer_id", "next_payable_at")
  WHERE "next_payable_at" IS NOT NULL;

-- Moves the totals by holds written: each (group, payable_at, signed remaining) given counts in
-- its group's total when payable_at is after the group's matured_through (a new group's starts at
-- the epoch: every hold counts until the first sweep; any start would do). The group rows are
-- created when missing and locked in key order before they are read, so that the read sees the
-- matured_through of the last committed sweep and no sweep moves it until this transaction ends.
-- A sweep that locked the row first has already committed when the read below runs (each
-- statement of a volatile function takes a new snapshot), so a hold written meanwhile is counted
-- by exactly one of the two.
CREATE FUNCTION cashback_held_move(issuers TEXT[], chgs TEXT[], payables TIMESTAMPTZ[], minors BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO cashback_held (issuer_id, chg_id, held_minor, matured_through, next_payable_at, updated_at)
  SELECT DISTINCT m.issuer_id, m.chg_id, 0::bigint, '1970-01-01T00:00:00Z'::timestamptz, NULL::timestamptz, now()
    FROM unnest(issuers, chgs) AS m(issuer_id, chg_id)
   ORDER BY 1, 2
  ON CONFLICT (issuer_id, chg_id) DO NOTHING;
  PERFORM 1 FROM cashback_held h
   WHERE (h.issuer_id, h.chg_id) IN (SELECT m.issuer_id, m.chg_id FROM unnest(issuers, chgs) AS m(issuer_id, chg_id))
   ORDER BY h.issuer_id, h.chg_id
     FOR UPDATE;
  UPDATE cashback_held h
     SET held_minor = h.held_minor + x.minor,
         next_payable_at = LEAST(h.next_payable_at, x.next_payable_at),
         updated_at = now()
    FROM (SELECT c.issuer_id, c.chg_id,
                 coalesce(sum(m.minor) FILTER (WHERE m.payable_at > c.matured_through), 0) AS minor,
                 min(m.payable_at) FILTER (WHERE m.payable_at > c.matured_through AND m.minor > 0) AS next_payable_at
            FROM unnest(issuers, chgs, payables, minors) AS m(issuer_id, chg_id, payable_at, minor)
            JOIN cashback_held c ON c.issuer_id = m.issuer_id AND c.chg_id = m.chg_id
           GROUP BY c.issuer_id, c.chg_id) x
   WHERE h.issuer_id = x.issuer_id AND h.chg_id = x.chg_id AND (x.minor <> 0 OR x.next_payable_at IS NOT NULL);
END $$;

-- Statement triggers: one move per statement (a settlement's batch inserts many holds at once),
-- from its transition tables. An update counts as its old rows taken out and its new rows put in,
-- whatever it changed (remaining_minor, amount, payable_at, the group); rows that did not change
-- cancel out before any lock is taken.
CREATE FUNCTION cashback_hold_moved() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  issuers TEXT[];
  chgs TEXT[];
  payables TIMESTAMPTZ[];
  minors BIGINT[];
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(issuer_id), array_agg(chg_id), array_agg(payable_at), array_agg(minor)
      INTO issuers, chgs, payables, minors
      FROM (SELECT issuer_id, chg_id, payable_at, sum(remaining_minor) AS minor FROM moved_new
             GROUP BY 1, 2, 3 HAVING sum(remaining_minor) <> 0) x;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(issuer_id), array_agg(chg_id), array_agg(payable_at), array_agg(minor)
      INTO issuers, chgs, payables, minors
      FROM (SELECT issuer_id, chg_id, payable_at, sum(minor) AS minor
              FROM (SELECT issuer_id, chg_id, payable_at, remaining_minor AS minor FROM moved_new
                    UNION ALL
                    SELECT issuer_id, chg_id, payable_at, -remaining_minor FROM moved_old) y
             GROUP BY 1, 2, 3 HAVING sum(minor) <> 0) x;
  ELSE
    SELECT array_agg(issuer_id), array_agg(chg_id), array_agg(payable_at), array_agg(minor)
      INTO issuers, chgs, payables, minors
      FROM (SELECT issuer_id, chg_id, payable_at, -sum(remaining_minor) AS minor FROM moved_old
             GROUP BY 1, 2, 3 HAVING sum(remaining_minor) <> 0) x;
  END IF;
  IF issuers IS NOT NULL THEN
    PERFORM cashback_held_move(issuers, chgs, payables, minors);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER "cashback_hold_inserted" AFTER INSERT ON "cashback_hold"
  REFERENCING NEW TABLE AS moved_new FOR EACH STATEMENT EXECUTE FUNCTION cashback_hold_moved();
CREATE TRIGGER "cashback_hold_updated" AFTER UPDATE ON "cashback_hold"
  REFERENCING OLD TABLE AS moved_old NEW TABLE AS moved_new FOR EACH STATEMENT EXECUTE FUNCTION cashback_hold_moved();
CREATE TRIGGER "cashback_hold_deleted" AFTER DELETE ON "cashback_hold"
  REFERENCING OLD TABLE AS moved_old FOR EACH STATEMENT EXECUTE FUNCTION cashback_hold_moved();

-- The sweep of one issuer: up to max_groups of its groups with a hold that matured by `through`
-- (its clock now), those no writer holds (SKIP LOCKED: a group being written waits for the next
-- turn, and the sweep never waits), each moved to matured_through = through with what matured
-- taken out. Locked first, read after: a writer blocked on one of these rows counts its hold
-- against the new matured_through once the sweep commits. Returns the groups swept.
CREATE FUNCTION cashback_held_sweep(sweep_issuer TEXT, through TIMESTAMPTZ, max_groups INTEGER)
RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
  due TEXT[];
  swept INTEGER;
BEGIN
  SELECT array_agg(chg_id) INTO due
    FROM (SELECT chg_id FROM cashback_held
           WHERE issuer_id = sweep_issuer AND next_payable_at <= through AND matured_through < through
           ORDER BY next_payable_at
           LIMIT max_groups
             FOR UPDATE SKIP LOCKED) x;
  IF due IS NULL THEN
    RETURN 0;
  END IF;
  UPDATE cashback_held h
     SET held_minor = h.held_minor - coalesce((SELECT sum(c.remaining_minor) FROM cashback_hold c
                                                WHERE c.issuer_id = h.issuer_id AND c.chg_id = h.chg_id
                                                  AND c.payable_at > h.matured_through AND c.payable_at <= through), 0),
         matured_through = through,
         next_payable_at = (SELECT min(c.payable_at) FROM cashback_hold c
                             WHERE c.issuer_id = h.issuer_id AND c.chg_id = h.chg_id
                               AND c.payable_at > through AND c.remaining_minor > 0),
         updated_at = now()
   WHERE h.issuer_id = sweep_issuer AND h.chg_id = ANY(due);
  GET DIAGNOSTICS swept = ROW_COUNT;
  RETURN swept;
END $$;

-- Every group's total written again from its holds, batch_groups groups per transaction (a
-- procedure called outside a transaction block commits each batch): the backfill, and an
-- operator's repair should ledgerInvariants ever report a total that disagrees. Each batch
-- creates the missing rows, locks them in key order, then reads the holds, so a writer either
-- committed before the read (and is in it) or moves the rewritten total after.
CREATE PROCEDURE cashback_held_rebuild(batch_groups INTEGER DEFAULT 1000) LANGUAGE plpgsql AS $$
DECLARE
  through TIMESTAMPTZ := clock_timestamp();
  after_issuer TEXT := '';
  after_chg TEXT := '';
  issuers TEXT[];
  chgs TEXT[];
BEGIN
  LOOP
    SELECT array_agg(issuer_id ORDER BY issuer_id, chg_id), array_agg(chg_id ORDER BY issuer_id, chg_id)
      INTO issuers, chgs
      FROM (SELECT DISTINCT issuer_id, chg_id FROM cashback_hold
             WHERE (issuer_id, chg_id) > (after_issuer, after_chg)
             ORDER BY issuer_id, chg_id
             LIMIT batch_groups) x;
    EXIT WHEN issuers IS NULL;
    INSERT INTO cashback_held (issuer_id, chg_id, held_minor, matured_through, next_payable_at, updated_at)
    SELECT m.issuer_id, m.chg_id, 0, through, NULL, now() FROM unnest(issuers, chgs) AS m(issuer_id, chg_id)
    ON CONFLICT (issuer_id, chg_id) DO NOTHING;
    PERFORM 1 FROM cashback_held h
     WHERE (h.issuer_id, h.chg_id) IN (SELECT m.issuer_id, m.chg_id FROM unnest(issuers, chgs) AS m(issuer_id, chg_id))
     ORDER BY h.issuer_id, h.chg_id
       FOR UPDATE;
    UPDATE cashback_held h
       SET matured_through = GREATEST(h.matured_through, through),
           held_minor = coalesce((SELECT sum(c.remaining_minor) FROM cashback_hold c
                                   WHERE c.issuer_id = h.issuer_id AND c.chg_id = h.chg_id
                                     AND c.payable_at > GREATEST(h.matured_through, through)), 0),
           next_payable_at = (SELECT min(c.payable_at) FROM cashback_hold c
                               WHERE c.issuer_id = h.issuer_id AND c.chg_id = h.chg_id
                                 AND c.payable_at > GREATEST(h.matured_through, through) AND c.remaining_minor > 0),
           updated_at = now()
     WHERE (h.issuer_id, h.chg_id) IN (SELECT m.issuer_id, m.chg_id FROM unnest(issuers, chgs) AS m(issuer_id, chg_id));
    after_issuer := issuers[array_length(issuers, 1)];
    after_chg := chgs[array_length(chgs, 1)];
    COMMIT;
  END LOOP;
END $$;
