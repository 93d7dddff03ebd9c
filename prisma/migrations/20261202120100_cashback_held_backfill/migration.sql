-- migrate: no transaction
-- The totals of the holds written before 20261202120000_cashback_held_totals: every group's
-- cashback_held written from its holds, a thousand groups per transaction (the procedure commits
-- each batch), so that a settlement or a refund of a group waits at most for one batch, never for
-- the whole table to be read. Safe to run again after a failure: each batch rewrites its groups'
-- totals from their holds under the rows' locks.
CALL cashback_held_rebuild(1000)
