-- No query reads ingested_event by (issuer_id, chg_id) alone: reads by group also name the
-- event's id (primary key), lists of a group's purchases go through reward events, and the
-- previewed authorizations of a group have their own partial index. The index only cost
-- writes: every ingested row and each of its later versions (the hand-over and the outcome
-- change columns that other indexes' predicates name, so those updates are never HOT) paid
-- one more btree insert.
DROP INDEX IF EXISTS "ingested_event_issuer_id_chg_id_idx";
