-- What a database holds from before cashback could be paid out, made what this release expects.
-- Its data step (prisma/data-step-cashback-payouts.ts) runs first, in the same transaction: every
-- purchase's cashback gets its hold by the purchase's date and the issuer's cashbackHoldDays, and
-- what refunds recorded as unrecoverable becomes owed by the group (ledger transfers, reward
-- events). Its report gives the counts (npm run migrate; _prisma_migrations.logs).

-- reward_clawed_back bodies gain owedMinor; those sent before held none.
UPDATE "webhook" SET "data" = "data" || '{"owedMinor": 0}'::jsonb
 WHERE "type" = 'reward_clawed_back' AND NOT ("data" ? 'owedMinor');
