-- Four eyes (API.md, "Operators with names"; docs/decisions/0059-four-eyes.md): a call that moves
-- enough money, or names an admin, is recorded as an approval and carried out only when a
-- second operator approves it. The database refuses a checker who is the maker.

-- A claim approval above this amount needs a second operator: per issuer, like its other limits.
ALTER TABLE "issuer" ADD COLUMN "approval_threshold_minor" BIGINT NOT NULL DEFAULT 50000
  CONSTRAINT "issuer_approval_threshold_minor_check" CHECK ("approval_threshold_minor" >= 0);

CREATE TABLE "approval" (
    "id" TEXT NOT NULL,
    -- The operation waiting (an operationId of the route table) and the role that may approve it.
    "action" TEXT NOT NULL,
    "operation_id" TEXT NOT NULL,
    "required_role" TEXT NOT NULL,
    "target_id" TEXT,
    -- Why it waits (core/rules/four-eyes.ts), and what it would do, as the maker sent it.
    "reason" TEXT NOT NULL,
    "request" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "maker_id" TEXT NOT NULL,
    "checker_id" TEXT,
    -- The answer of the call carried out: its status and body.
    "result" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT now(),
    "decided_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    CONSTRAINT "approval_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "approval_status_check" CHECK ("status" IN ('pending', 'approving', 'approved', 'failed', 'rejected')),
    -- Four eyes are two people: whoever decides is not whoever asked.
    CONSTRAINT "approval_checker_not_maker_check" CHECK ("checker_id" IS NULL OR "checker_id" <> "maker_id"),
    CONSTRAINT "approval_decided_check" CHECK (("status" = 'pending') = ("checker_id" IS NULL))
);
CREATE INDEX "approval_status_created_at_idx" ON "approval"("status", "created_at", "id");
