// Activities are built by a factory that receives their dependencies, so tests can pass
// fakes and only worker/ builds the real ones.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import type { WorkflowEngine } from '../core/workflow-engine';
import type { WebhookDestinations } from '../core/webhooks/destination-guard';
import type { KeyRing } from '../core/crypto/key-ring';
import { createLifecycleActivities } from './lifecycle';
import { createSweepActivities } from './sweeper';
import { createExpiryActivities } from './expiry';
import { createNoticeActivities } from './notices';
import { createWebhookActivities } from './webhooks';
import { createRetentionActivities } from './webhooks/retention';
import { createClaimActivities } from './claims';
import { createPayoutActivities } from './payouts';
import { createStatementActivities } from './statements';
import { createEnrolmentActivities } from './enrolment';
import { createDeliveryStarter } from './webhooks/start-delivery';
import type { LifecycleDeps } from './lifecycle/deps';
import { KnownAccounts } from '../core/domain/ledger/known-accounts';

export interface ActivityDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** Where, and with which settings, the sweeper starts the lifecycles it hands events to. */
  temporal: WorkflowEngine;
  faults?: LifecycleDeps['faults'];
  /** This process's webhook relay (worker/webhook-relay.ts), when it runs one. */
  relay?: LifecycleDeps['relay'];
  /** Where webhooks may go, checked before every attempt (core/webhooks/destination-guard.ts). */
  webhookDestinations: WebhookDestinations;
  /** WEBHOOK_SECRET_KEYS: opens the endpoints' sealed signing secrets (core/webhooks/secret-sealing.ts). */
  webhookSecretKeys: KeyRing;
  /** WEBHOOK_ENDPOINT_DISABLE_AFTER (null: never); the contract's 5 days when not given. */
  webhookEndpointDisableAfterMs?: number | null;
  /** Tests only: a shorter webhook HTTP time-out than the contract's 10 s. */
  webhookAttemptTimeoutMs?: number;
  /** HANDOVER_MAX_IN_FLIGHT, under which the sweeper admits waiting events; the default when not given. */
  handoverMaxInFlight?: number;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createLifecycleActivities({ ...deps, knownAccounts: new KnownAccounts() }),
    ...createSweepActivities(deps),
    ...createExpiryActivities(deps),
    ...createNoticeActivities(deps),
    ...createWebhookActivities(deps),
    ...createRetentionActivities(deps),
    ...createClaimActivities(deps),
    ...createPayoutActivities(deps),
    ...createStatementActivities(deps),
    ...createEnrolmentActivities(deps),
    ...createDeliveryStarter(),
  };
}

export type Activities = ReturnType<typeof createActivities>;
