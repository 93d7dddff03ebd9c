-- The enrolment run of a targeted offer (API.md, Targeted offers): a workflow that enrols, a chunk
-- at a time, every group that exists when the offer starts or its targeting changes. The row is
-- what the workflow works on and what an operator reads: where it stands (the last group id done),
-- what it decided, and why it failed. One run of an offer processes at a time (the partial unique
-- index), so a PATCH during a run does not start a second one over the same groups. A new table:
-- no lock on a busy one.
CREATE TABLE "offer_enrolment_run" (
    "id" TEXT NOT NULL,
    "offer_id" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'processing',
    "reason" TEXT NOT NULL,
    "after_chg_id" TEXT NOT NULL DEFAULT '',
    "groups_enrolled" INTEGER NOT NULL DEFAULT 0,
    "groups_treated" INTEGER NOT NULL DEFAULT 0,
    "groups_control" INTEGER NOT NULL DEFAULT 0,
    "groups_outside" INTEGER NOT NULL DEFAULT 0,
    "failure_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "offer_enrolment_run_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "offer_enrolment_run_offer_id_fkey" FOREIGN KEY ("offer_id") REFERENCES "offer"("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "offer_enrolment_run_status_check" CHECK ("status" IN ('processing', 'completed', 'failed')),
    CONSTRAINT "offer_enrolment_run_reason_check" CHECK ("reason" IN ('created', 'changed', 'started'))
);
CREATE INDEX "offer_enrolment_run_offer_id_idx" ON "offer_enrolment_run"("offer_id", "created_at");
CREATE UNIQUE INDEX "offer_enrolment_run_processing_key" ON "offer_enrolment_run"("offer_id") WHERE "status" = 'processing';
