// The API process: reads configuration, connects, listens, and shuts down gracefully
// (stop accepting, let in-flight requests finish, then close the pool).
import { loadConfig, requireConnections } from '../core/config';
import { createLogger } from '../core/logger';
import { createDb } from '../prisma/client';
import { Client } from '@temporalio/client';
import { connectTemporal } from '../worker/connection';
import { handOver } from '../activities/handover';
import { createHandoverQueue } from './ingestion/handover-queue';
import { createApp } from './app';
import { listenForAuthChanges, TokenCache } from './middleware/token-cache';
import { collectProcessMetrics } from '../core/metrics';
import { systemClock } from './deps';

async function main(): Promise<void> {
  const config = requireConnections(loadConfig());
  const logger = createLogger(config.logLevel, 'api');
  collectProcessMetrics();
  if (!config.operatorToken) throw new Error('OPERATOR_TOKEN is required for the API process');
  const db = createDb(config.databaseUrl, config.databasePoolSize);
  const temporal = await connectTemporal(config);
  const client = new Client({ connection: temporal, namespace: config.temporalNamespace });
  const handover = createHandoverQueue(
    (items) => handOver({ client, db, taskQueue: config.temporalTaskQueue }, items, () => new Date()),
    logger,
  );
  const tokenCache = new TokenCache();
  const authListener = listenForAuthChanges(config.databaseUrl, tokenCache, logger);
  const app = createApp({
    tokenCache,
    handover,
    temporal: { client, taskQueue: config.temporalTaskQueue },
    db,
    logger,
    clock: systemClock,
    config: { operatorToken: config.operatorToken },
    temporalHealth: async () => {
      await temporal.workflowService.getSystemInfo({});
    },
  });
  const server = app.listen(config.port, config.host, () => {
    logger.info({ port: config.port, host: config.host }, 'API listening');
  });
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'API shutting down');
    server.close(() => {
      // Hand over what was accepted before stopping; anything cut short is the sweeper's.
      void handover
        .drain()
        .then(() => Promise.allSettled([authListener.close(), db.$disconnect(), temporal.close()]))
        .then(() => process.exit(0));
    });
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 15_000).unref();
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
