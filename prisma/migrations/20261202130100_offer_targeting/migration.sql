-- Targeted offers (API.md, Targeted offers): how a group comes to qualify (opt_in: by activating
-- the merchant, as every offer so far; auto: by being in the audience), who the audience is (null:
-- every group) and the share of the audience held out as the control. The offer table is the
-- catalogue's, small: the constant defaults add the columns without a rewrite.
ALTER TABLE "offer" ADD COLUMN "activation" TEXT NOT NULL DEFAULT 'opt_in'
  CONSTRAINT "offer_activation_check" CHECK ("activation" IN ('opt_in', 'auto'));
ALTER TABLE "offer" ADD COLUMN "audience" JSONB
  CONSTRAINT "offer_audience_check" CHECK ("audience" IS NULL OR jsonb_typeof("audience") = 'object');
ALTER TABLE "offer" ADD COLUMN "holdout_bps" INTEGER NOT NULL DEFAULT 0
  CONSTRAINT "offer_holdout_bps_check" CHECK ("holdout_bps" BETWEEN 0 AND 5000);
