// A real API on a random local port, over the run's real database. Tests talk to it over
// HTTP exactly as an issuer would.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Connection } from '@temporalio/client';
import { createApp } from '../../api/app';
import { systemClock, type AppDeps, type Clock } from '../../api/deps';
import { createLogger } from '../../core/logger';
import { createDb, type Db } from '../../prisma/client';
import { createIssuer, createToken } from '../../api/issuers/store';
import { createRateLimiter } from '../../api/middleware/rate-limit';
import { errorObjectSchema } from '../../api/schemas/common';
import { testDatabaseUrl, testTemporalAddress, testWebhookDestinations, testWebhookSecretKeys } from './env';
import { answerClientErrors } from '../../api/client-errors';
import { appendFileSync } from 'node:fs';
import { contractViolation } from './contract';

export const OPERATOR_TOKEN = 'op_test_operator_token_0123456789abcdef0123456789';

export interface TestResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export interface RequestOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface TestApp {
  db: Db;
  url: string;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  operator<T = any>(method: string, path: string, body?: unknown): Promise<TestResponse<T>>;
  close(): Promise<void>;
}

export async function startTestApp(overrides: Partial<AppDeps> & { clock?: Clock } = {}): Promise<TestApp> {
  const db = overrides.db ?? createDb(testDatabaseUrl(), 10);
  let temporal: Connection | undefined;
  const deps: AppDeps = {
    db,
    logger: overrides.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    clock: overrides.clock ?? systemClock,
    config: {
      // Root unless a test switches it off by passing operatorToken: undefined.
      operatorToken:
        overrides.config && 'operatorToken' in overrides.config ? overrides.config.operatorToken : OPERATOR_TOKEN,
      metricsToken: overrides.config?.metricsToken,
    },
    webhookDestinations: overrides.webhookDestinations ?? testWebhookDestinations,
    webhookSecretKeys: overrides.webhookSecretKeys ?? testWebhookSecretKeys,
    handover: overrides.handover,
    tokenCache: overrides.tokenCache,
    // Limits out of any test's reach, so that every test runs the check and none is throttled
    // by accident; test/api/rate-limit.test.ts passes low ones.
    rateLimiter:
      overrides.rateLimiter ??
      createRateLimiter(
        { requestsPerSecond: 1_000_000, eventsPerSecond: 10_000_000, windowSeconds: 1 },
        { shared: false },
      ),
    temporal: overrides.temporal,
    draining: overrides.draining,
    temporalHealth:
      overrides.temporalHealth ??
      (async () => {
        temporal ??= await Connection.connect({ address: testTemporalAddress() });
        await temporal.workflowService.getSystemInfo({});
      }),
  };
  const server: Server = answerClientErrors(createApp(deps).listen(0, '127.0.0.1'));
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const request = async (method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: string | Buffer | undefined = options.raw;
    if (payload === undefined && options.body !== undefined) payload = JSON.stringify(options.body);
    if (payload !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url + path, { method, headers, body: payload });
    const text = await res.text();
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    // Every answer is checked against the document the server publishes (test/helpers/contract.ts).
    const violation = contractViolation(method, path, res.status, res.headers.get('content-type'), body, text);
    if (violation) {
      if (process.env.CONTRACT_LOG) appendFileSync(process.env.CONTRACT_LOG, `${violation}\n`);
      else assert.fail(`response off /openapi.json: ${violation}`);
    }
    return { status: res.status, body, text, headers: res.headers };
  };

  return {
    db,
    url,
    request,
    operator: (method, path, body) => request(method, path, { token: OPERATOR_TOKEN, body }),
    async close() {
      await new Promise((resolve) => server.close(resolve));
      server.closeAllConnections();
      await temporal?.close();
      if (!overrides.db) await db.$disconnect();
    },
  };
}

export interface TestIssuer {
  id: string;
  token: string;
  call<T = any>(method: string, path: string, body?: unknown): Promise<TestResponse<T>>;
}

export async function newIssuer(app: TestApp, environment: 'sandbox' | 'production' = 'sandbox'): Promise<TestIssuer> {
  const now = new Date();
  const issuer = await createIssuer(app.db, { name: `Test issuer ${now.getTime()}`, environment }, 'test', now);
  const { secret } = await createToken(app.db, issuer.id, 'test', 'test', now);
  return {
    id: issuer.id,
    token: secret,
    call: (method, path, body) => app.request(method, path, { token: secret, body }),
  };
}

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
const isErrorObject = ajv.compile(errorObjectSchema);

/** Asserts an API.md error object with the given status (and reason, when given). */
export function assertError(res: TestResponse, status: number, reasonCode?: string): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text.slice(0, 500)}`);
  const body: any = res.body;
  const valid: boolean = isErrorObject(res.body);
  assert.ok(valid, `not an error object: ${res.text.slice(0, 500)} ${JSON.stringify(isErrorObject.errors)}`);
  assert.equal(body.httpStatusCode, status);
  assert.match(body.uuid, /^err_[0-9a-f-]{36}$/);
  if (reasonCode) assert.equal(body.reasonCode, reasonCode, `reasonCode: ${res.text.slice(0, 300)}`);
}
