// Activities are built by a factory that receives their dependencies, so tests can pass
// fakes and only worker/ builds the real ones.
import type { Db } from '../prisma/client';
import type { Logger } from '../core/logger';

export interface ActivityDeps {
  db: Db;
  logger: Logger;
  clock: { now(): Date };
}

export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
