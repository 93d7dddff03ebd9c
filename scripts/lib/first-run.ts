// First-run setup of the dev stack: the operator token and one sandbox issuer.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Db } from '../../prisma/client';
import { createIssuer, createToken } from '../../api/issuers/store';

export interface OperatorToken {
  value: string;
  source: string;
  printable: boolean;
}

/** OPERATOR_TOKEN when set; else one generated once and kept in .data/operator-token. */
export function ensureOperatorToken(fromEnv: string | undefined, dataDir: string): OperatorToken {
  if (fromEnv) return { value: fromEnv, source: 'from OPERATOR_TOKEN', printable: false };
  const file = join(dataDir, 'operator-token');
  if (!existsSync(file)) writeFileSync(file, `op_${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  return { value: readFileSync(file, 'utf8').trim(), source: `kept in ${file}`, printable: true };
}

export async function ensureSandboxIssuer(db: Db, announce: (issuerId: string, token: string) => void): Promise<void> {
  if ((await db.issuer.count()) > 0) return;
  const now = new Date();
  const issuer = await createIssuer(db, { name: 'Sandbox issuer', environment: 'sandbox' }, 'first-run', now);
  const { secret } = await createToken(db, issuer.id, 'first run', 'first-run', now);
  announce(issuer.id, secret);
}

export type SandboxSeeding = { seed: boolean } | { refusal: string };

/**
 * Whether `npm start` loads the sandbox catalogue and issuer. Into its embedded database: yes,
 * unless SEED_SANDBOX=false. Into DATABASE_URL (someone's real database, perhaps production):
 * only with SEED_SANDBOX=true; SEED_SANDBOX=false runs the stack without them; unset refuses,
 * so that sandbox merchants and a sandbox token never land in a database by accident.
 */
export function sandboxSeeding(config: { databaseUrl?: string; seedSandbox?: boolean }): SandboxSeeding {
  if (config.seedSandbox !== undefined) return { seed: config.seedSandbox };
  if (config.databaseUrl === undefined) return { seed: true };
  return {
    refusal:
      'npm start: DATABASE_URL names an external database, and the dev stack loads the sandbox catalogue and a sandbox issuer into it only with SEED_SANDBOX=true (SEED_SANDBOX=false starts without them; production runs npm run migrate, start:api and start:worker: docs/operating/deploy.md)',
  };
}
