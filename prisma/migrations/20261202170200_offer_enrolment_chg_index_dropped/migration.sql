-- migrate: no transaction
-- The group's index of the previous migration leads with chg_id too and serves every read this
-- one did; keeping both would cost every enrolment written a second index entry.
DROP INDEX CONCURRENTLY IF EXISTS "offer_enrolment_chg_id_idx";
