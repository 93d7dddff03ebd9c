// What the HTTP layer needs from the outside world, passed in by whoever builds the app
// (api/server.ts in production, test/helpers in tests).
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import type { Config } from '../core/config';
import type { WebhookDestinations } from '../core/webhooks/destination-guard';
import type { KeyRing } from '../core/crypto/key-ring';
import type { Handover } from './ingestion/handover-queue';
import type { TokenCache } from './middleware/token-cache';
import type { RateLimiter } from './middleware/rate-limit';
import type { WorkflowEngine } from '../core/workflow-engine';
import type { Draining } from './draining';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface AppDeps {
  db: Db;
  logger: Logger;
  clock: Clock;
  /** operatorToken: root's (OPERATOR_TOKEN); undefined when root is switched off (OPERATOR_ROOT=disabled). */
  config: Pick<Config, 'operatorToken' | 'metricsToken'> & Partial<Pick<Config, 'ingestionBacklogLimit'>>;
  /** Where webhook endpoints may point, checked when one is saved (core/webhooks/destination-guard.ts). */
  webhookDestinations: WebhookDestinations;
  /** WEBHOOK_SECRET_KEYS: seals webhook signing secrets when they are made (core/webhooks/secret-sealing.ts). */
  webhookSecretKeys: KeyRing;
  /** Readiness probe of the workflow engine; absent means "not configured". */
  temporalHealth?: () => Promise<void>;
  /** Set when the process starts shutting down: /readyz then answers 503 (api/draining.ts); absent means never. */
  draining?: Draining;
  /** Token → issuer cache, on when its LISTEN connection is (api/middleware/token-cache.ts). */
  tokenCache?: TokenCache;
  /** Rate limits per issuer token (api/middleware/rate-limit.ts); absent means no limits. */
  rateLimiter?: RateLimiter;
  /** Hands accepted events to Temporal after the response; absent means the sweeper does it. */
  handover?: Handover;
  /** Starts workflows (webhook replay, reprocess) with the configured settings; absent means those routes answer 503. */
  temporal?: WorkflowEngine;
}
