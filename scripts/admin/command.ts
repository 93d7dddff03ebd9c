// The shape of an admin CLI command and a small argument parser (positionals and
// --flag value pairs), enough for operator commands without a dependency.
import type { Db } from '../../prisma/client';
import type { WorkflowEngine } from '../../core/workflow-engine';
import type { KeyRing } from '../../core/crypto/key-ring';

export interface CommandContext {
  db: Db;
  actor: string;
  now: Date;
  print(value: unknown): void;
  /** Connects to Temporal on first use: only commands that start workflows need it. */
  temporal(): Promise<WorkflowEngine>;
  /** WEBHOOK_SECRET_KEYS (or the dev stack's key); throws when neither is there. */
  webhookSecretKeys(): KeyRing;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string>;
}

export interface Command {
  name: string;
  usage: string;
  summary: string;
  run(args: ParsedArgs, ctx: CommandContext): Promise<void>;
}

export class UsageError extends Error {}

export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg.startsWith('--')) {
      const [key, inline] = arg.slice(2).split('=', 2);
      const value = inline ?? argv[i + 1];
      if (value === undefined || (inline === undefined && value.startsWith('--')))
        throw new UsageError(`--${key} needs a value`);
      flags[key] = value;
      if (inline === undefined) i++;
    } else {
      positionals.push(arg);
    }
  }
  return { positionals, flags };
}

export function required(args: ParsedArgs, index: number, name: string): string {
  const value = args.positionals[index];
  if (value === undefined) throw new UsageError(`missing <${name}>`);
  return value;
}

export function intFlag(args: ParsedArgs, name: string): number | undefined {
  const raw = args.flags[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new UsageError(`--${name} must be an integer`);
  return value;
}
