-- A group's running total (cashback_held) is created from its holds as they stand, instead of at
-- 0: between 20261202120000_cashback_held_totals and the backfill after this one, a group's first
-- write since the triggers exist may meet holds written before them (a refund of an older
-- purchase), which a total started at 0 would take below 0 and the CHECK refuse (the refund would
-- fail until the backfill reached its group). The new row starts at the remaining value of the
-- group's holds this statement sees (its own writes and others' committed ones) less what this
-- statement moved, which the update below adds back; a writer still uncommitted moves it after.
CREATE OR REPLACE FUNCTION cashback_held_move(issuers TEXT[], chgs TEXT[], payables TIMESTAMPTZ[], minors BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO cashback_held (issuer_id, chg_id, held_minor, matured_through, next_payable_at, updated_at)
  SELECT g.issuer_id, g.chg_id,
         coalesce((SELECT sum(c.remaining_minor) FROM cashback_hold c
                    WHERE c.issuer_id = g.issuer_id AND c.chg_id = g.chg_id
                      AND c.payable_at > '1970-01-01T00:00:00Z'::timestamptz), 0) - g.moved,
         '1970-01-01T00:00:00Z'::timestamptz,
         (SELECT min(c.payable_at) FROM cashback_hold c
           WHERE c.issuer_id = g.issuer_id AND c.chg_id = g.chg_id
             AND c.payable_at > '1970-01-01T00:00:00Z'::timestamptz AND c.remaining_minor > 0),
         now()
    FROM (SELECT m.issuer_id, m.chg_id,
                 coalesce(sum(m.minor) FILTER (WHERE m.payable_at > '1970-01-01T00:00:00Z'::timestamptz), 0) AS moved
            FROM unnest(issuers, chgs, payables, minors) AS m(issuer_id, chg_id, payable_at, minor)
           GROUP BY m.issuer_id, m.chg_id) g
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
