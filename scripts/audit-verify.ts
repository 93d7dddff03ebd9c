// `npm run audit:verify`: checks the audit trail's chain (core/domain/audit-chain.ts), the same
// check as GET /admin/v1/audit-log/verify, straight against the database (DATABASE_URL, or the
// embedded database of `npm start` when unset). Prints the verdict as JSON; exits 0 when the
// chain holds, 1 when it breaks (naming the first row where it does), 2 when it cannot check.
import { loadConfig } from '../core/config';
import { verifyAuditChain } from '../core/domain/audit-chain';
import { createDb, poolOf } from '../prisma/client';

async function main(): Promise<number> {
  const config = loadConfig();
  const databaseUrl = config.databaseUrl ?? `postgresql://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/rewards`;
  const db = createDb(databaseUrl, 1);
  try {
    const started = performance.now();
    const verdict = await verifyAuditChain(poolOf(db));
    console.log(JSON.stringify({ ...verdict, seconds: Number(((performance.now() - started) / 1000).toFixed(2)) }));
    return verdict.ok ? 0 : 1;
  } finally {
    await db.$disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  },
);
