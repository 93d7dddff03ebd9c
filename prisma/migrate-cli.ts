// `npm run migrate`: applies prisma/migrations to DATABASE_URL with our runner (migrate.ts) and
// nothing else: no sandbox data, no Temporal. The deploy step before the workers and APIs roll
// (docs/operating/deploy.md). Safe to run from several places at once (an advisory lock) and again
// (applied migrations are skipped; an edited one stops it; one that waited longer than
// MIGRATION_LOCK_TIMEOUT for a lock stopped without applying anything). Needs a direct connection to
// PostgreSQL: the lock is held by the connection, which a pooler in transaction mode does not keep.
import { ConfigError, loadConfig } from '../core/config';
import { createLogger } from '../core/logger';
import { migrate, MIGRATIONS_DIR } from './migrate';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError(['DATABASE_URL is required']);
  const logger = createLogger(config.logLevel, 'migrate');
  // The keys seal webhook secrets a release before sealing stored in plaintext (prisma/data-steps.ts).
  const result = await migrate(config.databaseUrl, {
    lockTimeoutMs: config.migrationLockTimeoutMs,
    webhookSecretKeys: config.webhookSecretKeys,
  });
  logger.info(
    { dir: MIGRATIONS_DIR, applied: result.applied, alreadyApplied: result.alreadyApplied.length },
    'migrations up to date',
  );
  for (const { migration, report } of result.reports) logger.warn({ migration }, report);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
