// What lifecycle activities need from the outside; only worker/ builds the real ones.
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';

export interface LifecycleDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** Fault injection for crash-safety tests; never set in production. */
  faults?: {
    beforeActivity?(activity: string, eventId: string): Promise<void> | void;
    afterCommit?(activity: string, eventId: string): Promise<void> | void;
  };
}
