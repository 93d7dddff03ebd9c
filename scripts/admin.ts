// `npm run admin -- <command> [args]`: operator tasks from a shell. Talks to PostgreSQL
// directly (DATABASE_URL, or the embedded database of `npm start` when unset).
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { ApiError } from '../core/errors';
import { loadConfig } from '../core/config';
import { workflowSettings } from '../core/workflow-engine';
import { createDb } from '../prisma/client';
import { parseArgs, UsageError, type Command } from './admin/command';
import { issuerCommands } from './admin/issuer-commands';
import { operatorCommands } from './admin/operator-commands';
import { catalogueCommands } from './admin/catalogue-commands';
import { webhookCommands } from './admin/webhook-commands';
import { transactionCommands } from './admin/transaction-commands';
import { claimCommands } from './admin/claim-commands';
import { recoveryCommands } from './admin/recovery-commands';
import { statementCommands } from './admin/statement-commands';
import { approvalCommands } from './admin/approval-commands';
import { Client, type Connection } from '@temporalio/client';
import { connectTemporal } from '../core/temporal-connection';
import { readDevWebhookSecretKeys } from './lib/webhook-secret-key';

const COMMANDS: Command[] = [
  ...issuerCommands,
  ...operatorCommands,
  ...catalogueCommands,
  ...webhookCommands,
  ...transactionCommands,
  ...claimCommands,
  ...recoveryCommands,
  ...statementCommands,
  ...approvalCommands,
];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.usage.length));
  return [
    'Usage: npm run admin -- <command> [args]',
    '',
    ...COMMANDS.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`),
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    console.error(help());
    return name === undefined || name === 'help' || name === '--help' ? 0 : 2;
  }
  const config = loadConfig();
  const databaseUrl = config.databaseUrl ?? `postgresql://postgres:postgres@127.0.0.1:${config.embeddedPgPort}/rewards`;
  const db = createDb(databaseUrl, 2);
  let temporal: Connection | undefined;
  try {
    await command.run(parseArgs(rest), {
      db,
      actor: `cli:${userInfo().username}`,
      now: new Date(),
      print: (value) => console.log(JSON.stringify(value, null, 2)),
      async temporal() {
        // TEMPORAL_ADDRESS, or the dev server of `npm start` when unset (like the database).
        const temporalAddress = config.temporalAddress ?? `127.0.0.1:${config.temporalDevPort}`;
        temporal ??= await connectTemporal({ ...config, temporalAddress });
        return {
          client: new Client({ connection: temporal, namespace: config.temporalNamespace }),
          taskQueue: config.temporalTaskQueue,
          settings: workflowSettings(config),
        };
      },
      webhookSecretKeys() {
        // WEBHOOK_SECRET_KEYS, or the key `npm start` generated when unset (like the database).
        const keys =
          config.webhookSecretKeys ?? readDevWebhookSecretKeys(resolve(__dirname, '..', config.dataDir))?.keys;
        if (!keys)
          throw new Error(
            'WEBHOOK_SECRET_KEYS is required for this command (the value the API and the worker run with)',
          );
        return keys;
      },
    });
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\nusage: npm run admin -- ${command.usage}`);
      return 2;
    }
    if (err instanceof ApiError) {
      console.error(JSON.stringify(err.toBody(), null, 2));
      return 1;
    }
    throw err;
  } finally {
    await temporal?.close();
    await db.$disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
