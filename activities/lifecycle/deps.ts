// What lifecycle activities need from the outside; only worker/ builds the real ones.
import type { Db } from '../../prisma/client';
import type { Logger } from '../../core/logger';
import type { KnownAccounts } from '../../core/domain/ledger/known-accounts';
import type { LocalRelay } from '../webhooks/outbox';

export interface LifecycleDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
  /** Accounts this process saw committed: settlements skip creating them. */
  knownAccounts?: KnownAccounts;
  /** This process's webhook relay: a step's webhook goes to it directly after the commit. */
  relay?: LocalRelay;
  /** Fault injection for crash-safety tests; never set in production. */
  faults?: {
    beforeActivity?(activity: string, eventId: string): Promise<void> | void;
    afterCommit?(activity: string, eventId: string): Promise<void> | void;
  };
}
