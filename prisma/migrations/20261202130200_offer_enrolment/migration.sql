-- A group's enrolment in a targeted offer (API.md, Targeted offers): decided once, as of the
-- group's entry into the offer, and never again: whether it was in the audience (and why), and its
-- arm when it was. The primary key makes the first decision the only one, whoever makes it (an
-- enrolment run, a settlement, a preview). The arm index serves the lift report's counts.
CREATE TABLE "offer_enrolment" (
    "offer_id" TEXT NOT NULL,
    "chg_id" TEXT NOT NULL,
    "issuer_id" TEXT NOT NULL,
    "in_audience" BOOLEAN NOT NULL,
    "arm" TEXT,
    "entered_at" TIMESTAMPTZ(3) NOT NULL,
    "detail" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    CONSTRAINT "offer_enrolment_pkey" PRIMARY KEY ("offer_id", "chg_id"),
    CONSTRAINT "offer_enrolment_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "offer_enrolment_chg_id_fkey" FOREIGN KEY ("chg_id") REFERENCES "cardholder_group"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "offer_enrolment_arm_check" CHECK (
      ("in_audience" AND "arm" IN ('treated', 'control')) OR (NOT "in_audience" AND "arm" IS NULL))
);
CREATE INDEX "offer_enrolment_offer_issuer_arm_idx" ON "offer_enrolment"("offer_id", "issuer_id", "arm");
CREATE INDEX "offer_enrolment_chg_id_idx" ON "offer_enrolment"("chg_id");
