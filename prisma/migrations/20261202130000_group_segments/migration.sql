-- A group's segments (API.md, Targeted offers): the issuer's own labels ("premium", "student") that
-- offer audiences name. A constant default adds the column without rewriting the table; the CHECKs
-- are added NOT VALID (no scan under the table's lock): every row has the empty default, which
-- meets them, and every write is checked from now on.
ALTER TABLE "cardholder_group" ADD COLUMN "segments" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "cardholder_group" ADD CONSTRAINT "cardholder_group_segments_check"
  CHECK (cardinality("segments") <= 20 AND array_position("segments", NULL) IS NULL) NOT VALID;
