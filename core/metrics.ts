// Prometheus metrics of the service, on prom-client's default registry. Each process (API,
// worker) exposes what it counted: the API at GET /metrics, the worker on its own port.
import client from 'prom-client';

export const registry = client.register;

let defaultsCollected = false;
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  client.collectDefaultMetrics({ register: registry, prefix: 'rewards_' });
}

function counter<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  return (
    (registry.getSingleMetric(name) as client.Counter<L> | undefined) ?? new client.Counter({ name, help, labelNames })
  );
}

function gauge<L extends string>(name: string, help: string, labelNames: readonly L[]) {
  return (
    (registry.getSingleMetric(name) as client.Gauge<L> | undefined) ?? new client.Gauge({ name, help, labelNames })
  );
}

export const httpRequests = counter('rewards_http_requests_total', 'HTTP requests by route and status.', [
  'method',
  'route',
  'status',
] as const);

export const httpDuration =
  (registry.getSingleMetric('rewards_http_request_duration_seconds') as
    client.Histogram<'method' | 'route' | 'status'> | undefined) ??
  new client.Histogram({
    name: 'rewards_http_request_duration_seconds',
    help: 'HTTP request latency by route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });

export const offerListPages = counter(
  'rewards_offer_list_pages_total',
  "A group's offer list pages sent, by whether the page kept from the same request's last read still held.",
  ['source'] as const,
);

export const eventsIngested = counter(
  'rewards_events_ingested_total',
  'Ingested events by kind and outcome (accepted, failed).',
  ['kind', 'outcome'] as const,
);

export const ledgerPostings = counter('rewards_ledger_postings_total', 'Ledger transfers posted, by kind.', [
  'kind',
] as const);

export const webhookAttempts = counter(
  'rewards_webhook_attempts_total',
  'Webhook delivery attempts, by webhook type and outcome.',
  ['type', 'outcome'] as const,
);

export const webhookEndpointsDisabled = counter(
  'rewards_webhook_endpoints_disabled_total',
  'Webhook endpoints disabled by the service because every attempt to them failed for WEBHOOK_ENDPOINT_DISABLE_AFTER.',
  [] as const,
);

export const webhookDeliveriesSkipped = counter(
  'rewards_webhook_deliveries_skipped_total',
  'Webhook deliveries ended skipped, without an attempt, because their endpoint was disabled or deleted.',
  [] as const,
);

export const webhookFirstAttemptsResent = counter(
  'rewards_webhook_first_attempts_resent_total',
  'First attempts sent again because the relay that claimed the webhook before stopped without recording one (it died, or failed mid-way): each may have reached the receiver twice.',
  [] as const,
);

export const activityFailures = counter(
  'rewards_activity_failures_total',
  'Activity executions that failed, by activity type.',
  ['activity'] as const,
);

export const lifecycleOutcomes = counter(
  'rewards_lifecycle_outcomes_total',
  'Outcomes of lifecycle steps, by step and status; step="markUnknown", status="unknown": events marked unknown.',
  ['step', 'status'] as const,
);

export const ledgerTrialBalance = gauge(
  'rewards_ledger_trial_balance_minor',
  "The ledger's trial balance in minor units: every account's balance signed by its normal side (debits positive), summed; 0 in a healthy ledger. Set by the worker's ledger watch.",
  [] as const,
);

export const handoverOldestSeconds = gauge(
  'rewards_handover_oldest_seconds',
  "Age in seconds of the issuer's oldest event waiting for its hand-over to Temporal, as the hand-over watch last read it; no series for an issuer with none waiting.",
  ['issuer'] as const,
);

export const handoverWaitingEvents = gauge(
  'rewards_handover_waiting_events',
  "The issuer's events waiting for their hand-over to Temporal (not yet admitted), as the hand-over watch last read them.",
  ['issuer'] as const,
);

export const handoverInFlight = gauge(
  'rewards_handover_in_flight',
  'Purchases handed over to Temporal and not yet finished, across the deployment, as the hand-over watch last read them; at most HANDOVER_MAX_IN_FLIGHT.',
  [] as const,
);

export const handovers = counter(
  'rewards_handovers_total',
  'Events handed over to Temporal (signalled, and taken) by this process: by the API that stored them, or by the hand-over watch.',
  [] as const,
);

export const budgetRetries = counter(
  'rewards_budget_retries_total',
  "Settlements decided again because their offer's budget moved between the read and the write (another settlement took what was left).",
  [] as const,
);

export const offerBudgetUsedRatio = gauge(
  'rewards_offer_budget_used_ratio',
  "Share of an offer's budget used in its current period (the month in UTC of a monthly budget, else its life), net of refunds; 1 or above is spent. Set by the worker's budget watch for every budgeted offer not ended.",
  ['offer_id', 'merchant_id', 'period'] as const,
);
