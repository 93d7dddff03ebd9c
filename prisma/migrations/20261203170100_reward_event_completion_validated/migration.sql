-- Validates reward_event's completion CHECK under SHARE UPDATE EXCLUSIVE: reads and writes go on
-- while every row is checked (all NULL before this release).
ALTER TABLE "reward_event" VALIDATE CONSTRAINT "reward_event_completion_check";
