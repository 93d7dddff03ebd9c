// One HTTP POST of a webhook body. Success is any 2xx within the time-out (API.md,
// Webhooks); redirects are not followed (a 3xx is a failed attempt), so a receiver cannot
// bounce signed bodies to another host.
//
// The destination is checked first (core/webhooks/destination-guard.ts): a refused one is
// never connected to, so an attempt record says "refused" and nothing about what listens
// there. The request goes out through node:http(s) with a `lookup` that answers only the
// addresses just checked: the host is resolved once per attempt, for the check, and the socket
// cannot be pointed elsewhere by a second answer (DNS rebinding). TLS still verifies the
// certificate for the host name (SNI), and the Host header is the URL's host.
import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, type ResolvedAddress, type WebhookDestinations } from '../../core/webhooks/destination-guard';

/** Whole-request time-out, resolving and body included (API.md: "any 2xx within 10 s"). */
export const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/** Stored error text is bounded: receivers control part of it. */
export const MAX_ATTEMPT_ERROR_LENGTH = 500;

export type SendErrorClass = 'http_status' | 'timeout' | 'connection_error' | 'request_error' | 'destination_refused';

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  latencyMs: number;
  /** Why the attempt failed, as a value; null on success. */
  errorClass: SendErrorClass | null;
  /** `<error class>: <detail>`, truncated, for people; null on success. */
  error: string | null;
}

/** A failed attempt's class and its text. */
type Failure = Pick<SendResult, 'errorClass' | 'error'>;

// Connections are kept alive between attempts to the same host and port, as fetch did; a kept
// socket was opened to an address checked when it was opened. An idle socket closes after 4 s,
// before a receiver's own keep-alive time-out (Node's default is 5 s) closes it under a request.
const AGENT_OPTIONS = { keepAlive: true, timeout: 4_000, scheduling: 'lifo' as const };
const agents = { 'http:': new http.Agent(AGENT_OPTIONS), 'https:': new https.Agent(AGENT_OPTIONS) };

export async function sendWebhook(
  destinations: WebhookDestinations,
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number = WEBHOOK_ATTEMPT_TIMEOUT_MS,
): Promise<SendResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(timeoutMs);
  const failed = (failure: Failure): SendResult => ({ ok: false, statusCode: null, latencyMs: latency(), ...failure });
  const verdict = await destinations.check(url, signal);
  if (verdict.kind === 'refused') return failed(describe('destination_refused', `${verdict.reason}; nothing was sent`));
  if (verdict.kind === 'unresolved') {
    if (signal.aborted) return failed(describe('timeout', `no response within ${timeoutMs} ms`));
    return failed(describe('connection_error', `${verdict.code} the host name did not resolve`));
  }
  try {
    const status = await post(verdict.url, verdict.addresses, headers, body, signal);
    const ok = status >= 200 && status < 300;
    const failure = ok ? { errorClass: null, error: null } : describe('http_status', `receiver answered ${status}`);
    return { ok, statusCode: status, latencyMs: latency(), ...failure };
  } catch (err) {
    return failed(describeFailure(err, signal.aborted, timeoutMs));
  }
}

/** Resolves with the response status once the headers arrive; the body is drained and dropped. */
function post(
  url: URL,
  addresses: ResolvedAddress[],
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<number> {
  const client = url.protocol === 'https:' ? https : http;
  const payload = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        agent: agents[url.protocol as keyof typeof agents],
        lookup: pinnedLookup(addresses),
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'issuer-rewards-webhooks/1',
          ...headers,
          'content-length': String(payload.length),
        },
      },
      (res) => {
        // Read to the end so the connection can serve the next attempt; the time-out still
        // ends a body that never stops.
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function describeFailure(err: unknown, timedOut: boolean, timeoutMs: number): Failure {
  const e = err as { code?: string; message?: string };
  if (timedOut) return describe('timeout', `no response within ${timeoutMs} ms`);
  if (e?.code) return describe('connection_error', `${e.code} ${e.message ?? ''}`.trim());
  return describe('request_error', e?.message ?? String(err));
}

function describe(errorClass: SendErrorClass, detail: string): Failure {
  return { errorClass, error: `${errorClass}: ${detail}`.slice(0, MAX_ATTEMPT_ERROR_LENGTH) };
}
