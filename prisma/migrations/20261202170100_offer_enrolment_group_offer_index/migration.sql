-- migrate: no transaction
-- A group's enrolments with their offer and arm in the index itself: a group's offer list reads
-- them all on every request, by an index-only scan instead of one heap page per enrolment.
-- Built concurrently: enrolment runs write this table by the million.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "offer_enrolment_chg_id_offer_id_idx" ON "offer_enrolment"("chg_id", "offer_id") INCLUDE ("arm");
