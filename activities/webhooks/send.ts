// One HTTP POST of a webhook body. Success is any 2xx within the time-out (API.md,
// Webhooks); redirects are not followed (a 3xx is a failed attempt), so a receiver cannot
// bounce signed bodies to another host.

/** Whole-request time-out, body included (API.md: "any 2xx within 10 s"). */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/** Stored error text is bounded: receivers control part of it. */
export const MAX_ATTEMPT_ERROR_LENGTH = 500;

export type SendErrorClass = 'http_status' | 'timeout' | 'connection_error' | 'request_error';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** `<error class>: <detail>`, truncated; null on success. */
  error: string | null;
}

export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number = WEBHOOK_ATTEMPT_TIMEOUT_MS,
): Promise<SendResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'issuer-rewards-webhooks/1', ...headers },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // The answer's body is not used; drop it so the connection is freed.
    await res.body?.cancel().catch(() => undefined);
    const ok = res.status >= 200 && res.status < 300;
    return { ok, statusCode: res.status, latencyMs: latency(), error: ok ? null : describe('http_status', `receiver answered ${res.status}`) };
  } catch (err) {
    return { ok: false, statusCode: null, latencyMs: latency(), error: describeFailure(err, timeoutMs) };
  }
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return describe('timeout', `no response within ${timeoutMs} ms`);
  if (e?.cause?.code) return describe('connection_error', `${e.cause.code} ${e.cause.message ?? ''}`.trim());
  return describe('request_error', e?.cause?.message ?? e?.message ?? String(err));
}

function describe(errorClass: SendErrorClass, detail: string): string {
  return `${errorClass}: ${detail}`.slice(0, MAX_ATTEMPT_ERROR_LENGTH);
}
