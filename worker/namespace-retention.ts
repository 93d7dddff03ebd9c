// How long the service's Temporal namespace keeps a closed workflow's history (its retention
// period), as docs/operating/deploy.md ("Temporal") registers a production namespace and the
// production-like cluster registers its own (scripts/cluster/temporal-server.ts).
//
// Long enough that an engineer can still fetch, replay (`npm run replay -- <workflowId>`) and
// reset the run of a settlement or webhook delivery that failed when an issuer's month-end
// reconciliation reports it, a few weeks later; no longer than an issuer's webhook records are
// kept by default (core/rules/webhook-retention.ts), since a closed run's memo and search
// attributes still name the issuer's group and external id.
export const CLOSED_WORKFLOW_RETENTION_DAYS = 30;
