// Activities are built by a factory that receives their dependencies, so tests can pass
// fakes and only worker/ builds the real ones.
import type { Client } from '@temporalio/client';
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';
import { createLifecycleActivities } from './lifecycle';
import { createSweepActivities } from './sweeper';
import { createExpiryActivities } from './expiry';
import type { LifecycleDeps } from './lifecycle/deps';

export interface ActivityDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** The client the sweeper hands events over with. */
  temporal: { client: Client; taskQueue: string };
  faults?: LifecycleDeps['faults'];
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createLifecycleActivities(deps),
    ...createSweepActivities(deps),
    ...createExpiryActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
