-- The operator's decision that resolved a claim: each approve or reject call names its attempt,
-- and the attempt that resolved the claim is recorded with it, so an API that stopped waiting
-- for the claim's workflow learns whether its own call won
-- (docs/decisions/0035-claim-decisions-answer-in-bounded-time.md). Null for claims resolved by
-- the service, or before this column. Additive: the previous release neither reads nor writes it.
ALTER TABLE "claim" ADD COLUMN "decision_id" TEXT;
