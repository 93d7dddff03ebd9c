// The Prisma client factory. Prisma 7 talks to PostgreSQL through the pg driver adapter,
// so no native query engine is needed at run time.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client';

export type Db = PrismaClient;

export function createDb(databaseUrl: string, poolSize = 10): Db {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize });
  // Waiting for a pooled connection is normal under load (a burst of activities); failing a
  // transaction after Prisma's default 2 s would only turn that wait into retries.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 20_000 } });
}
