// Admin CLI commands for merchant statements, beside the operator routes: a run over a period,
// reading statements (and a statement's csv), and posting a merchant's payment. They call the
// same functions as the operator API, so both paths validate, post and audit alike.
import { randomUUID } from 'node:crypto';
import { isId } from '../../core/ids';
import { createStatementRun, findStatement, findStatementRun, listStatements } from '../../api/statements/store';
import { presentStatement, presentStatementRun } from '../../api/statements/present';
import { statementPaymentReason } from '../../core/rules/four-eyes';
import { holdForApproval } from './approval-commands';
import { statementCsvStream } from '../../api/statements/csv';
import { DEFAULT_PAGE_LIMIT } from '../../api/pagination';
import { required, UsageError, type Command } from './command';

const PERIOD = /^[0-9]{4}-(0[1-9]|1[0-2])$/;

function period(value: string | undefined, name = 'period'): string {
  if (value === undefined) throw new UsageError(`missing <${name}>`);
  if (!PERIOD.test(value)) throw new UsageError(`${value} is not a period (YYYY-MM)`);
  return value;
}

function typed(prefix: 'stm' | 'stmrun' | 'mp' | 'iss', value: string): string {
  if (!isId(prefix, value)) throw new UsageError(`${value} is not a ${prefix}_ id`);
  return value;
}

export const statementCommands: Command[] = [
  {
    name: 'statement:run',
    usage: 'statement:run <period YYYY-MM> [--key <idempotency key>]',
    summary: 'Bill every merchant for a period (one workflow); prints the run to follow with statement:run-status',
    async run(args, ctx) {
      const { run } = await createStatementRun(
        ctx.db,
        await ctx.temporal(),
        { actor: ctx.actor, idempotencyKey: args.flags.key ?? `cli:${randomUUID()}`, at: ctx.now },
        period(args.positionals[0]),
        (await ctx.temporal()).settings.statementChunkAccounts,
      );
      ctx.print(presentStatementRun(run));
    },
  },
  {
    name: 'statement:run-status',
    usage: 'statement:run-status <runId>',
    summary: 'A statement run: its status, statements issued and their total',
    async run(args, ctx) {
      ctx.print(presentStatementRun(await findStatementRun(ctx.db, typed('stmrun', required(args, 0, 'runId')))));
    },
  },
  {
    name: 'statement:list',
    usage: 'statement:list [--period YYYY-MM] [--merchant <merchantId>] [--issuer <issuerId>]',
    summary: 'Statements in the order they were issued (the first page)',
    async run(args, ctx) {
      const page = await listStatements(ctx.db, {
        limit: DEFAULT_PAGE_LIMIT,
        ...(args.flags.period ? { period: period(args.flags.period, '--period') } : {}),
        ...(args.flags.merchant ? { merchantId: typed('mp', args.flags.merchant) } : {}),
        ...(args.flags.issuer ? { issuerId: typed('iss', args.flags.issuer) } : {}),
      });
      ctx.print(page.data.map(presentStatement));
    },
  },
  {
    name: 'statement:show',
    usage: 'statement:show <statementId> [--csv yes]',
    summary: 'One statement, or with --csv yes its csv (one line per transfer) on standard output',
    async run(args, ctx) {
      const statement = await findStatement(ctx.db, typed('stm', required(args, 0, 'statementId')));
      if (args.flags.csv === 'yes') {
        for await (const chunk of statementCsvStream(ctx.db, statement)) process.stdout.write(chunk as string);
      } else ctx.print(presentStatement(statement));
    },
  },
  {
    name: 'statement:pay',
    usage: 'statement:pay <statementId> --amount <minor> --reference <bank reference> [--key <idempotency key>]',
    summary:
      "Hold a merchant's payment against a statement for a second person (approval:approve posts it, once per key: by default the statement and reference)",
    async run(args, ctx) {
      const statementId = typed('stm', required(args, 0, 'statementId'));
      const amountMinor = Number(args.flags.amount);
      if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0)
        throw new UsageError('--amount must be a positive integer of minor units');
      const reference = args.flags.reference;
      if (!reference) throw new UsageError('--reference is required');
      // The same command run twice (a retry after a lost answer) posts the payment once.
      const idempotencyKey = args.flags.key ?? `cli:statement-payment:${statementId}:${reference}`;
      await findStatement(ctx.db, statementId);
      // Every payment waits for a second person (four eyes): `approval:approve` posts it.
      await holdForApproval(ctx, {
        operationId: 'payStatement',
        reason: statementPaymentReason(),
        params: { statementId },
        body: { amountMinor, reference },
        idempotencyKey,
      });
    },
  },
];
