// The webhook body (API.md, Webhooks): { webhookId, type, createdAt, data }, and `"test": true`
// for a test event (no such field otherwise). Built only from
// stored fields and serialised with sorted keys, so every retry and replay of a webhook
// sends byte-identical bytes (and therefore a signature over the same content).

export interface StoredWebhook {
  id: string;
  type: string;
  createdAt: Date;
  data: unknown;
  /** A test event (POST /api/v2/webhook-endpoints/{id}/test). */
  test?: boolean;
}

export function buildEnvelope(webhook: StoredWebhook): string {
  return JSON.stringify(
    sortKeys({
      webhookId: webhook.id,
      type: webhook.type,
      createdAt: webhook.createdAt.toISOString(),
      data: webhook.data,
      ...(webhook.test ? { test: true } : {}),
    }),
  );
}

// JSONB does not keep key order; sorting makes the serialisation independent of storage.
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value as Record<string, unknown>).sort())
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}
