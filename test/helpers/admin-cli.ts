// Runs an admin CLI command (scripts/admin) against a test stack, as `npm run admin` would
// against the real one, and returns what it printed.
import type { Command } from '../../scripts/admin/command';
import { parseArgs } from '../../scripts/admin/command';
import type { Stack } from './stack';
import { testWebhookSecretKeys } from './env';

export async function runAdminCommand(
  stack: Stack,
  command: Command,
  argv: string[],
  actor = 'cli:test',
): Promise<unknown[]> {
  const printed: unknown[] = [];
  await command.run(parseArgs(argv), {
    db: stack.db,
    actor,
    now: new Date(),
    print: (v) => printed.push(v),
    temporal: async () => stack.engine,
    webhookSecretKeys: () => testWebhookSecretKeys,
  });
  return printed;
}
