// A span for each SQL statement a traced call runs (core/tracing.ts starts it): pg's
// Client.prototype.query, which the pool, the Prisma adapter and our own transactions all go
// through, is wrapped while tracing is on. Written here rather than taken from OpenTelemetry's
// pg instrumentation: that one builds connection attributes, a metric and callback bindings for
// every statement, and the settlement's dozen statements per purchase made it most of what
// tracing cost the worker. A statement gets a span only inside a trace (a request, an activity,
// a webhook's stored context; the sampler decides as for any child), never the transaction's
// BEGIN, COMMIT or ROLLBACK (their time is in the parent's), and never a submittable (a cursor
// or a stream).
import { SpanKind, SpanStatusCode, context, trace, type Span, type Tracer } from '@opentelemetry/api';

/** How much of a statement a SQL span keeps (db.statement). */
export const MAX_STATEMENT_CHARS = 300;

const TRANSACTION_CONTROL = /^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION)\b/i;

type Callback = (err: Error | null, result?: unknown) => unknown;
type Query = (this: PgClient, ...args: unknown[]) => unknown;
interface PgClient {
  database?: string;
}
interface QueryConfig {
  text?: unknown;
  name?: string;
  callback?: Callback;
  submit?: unknown;
}

/**
 * A query's span name: its prepared statement's name, else its first SQL word. (A statement
 * written on its own lines starts with a line break, which names nothing.)
 */
export function sqlSpanName(query: { text: string; name?: string }): string {
  return `pg.query:${query.name ?? /[A-Za-z]+/.exec(query.text)?.[0]?.toUpperCase() ?? 'SQL'}`;
}

/** db.statement: the settlement's one statement is kilobytes; its start, and its name, say which it is. */
export function statementAttribute(text: string): string {
  return text.length > MAX_STATEMENT_CHARS ? `${text.slice(0, MAX_STATEMENT_CHARS)}…` : text;
}

/** Wraps pg's Client.prototype.query; returns what undoes it. */
export function traceSql(tracer: Tracer, prototype: { query: Query } = require('pg').Client.prototype): () => void {
  const original = prototype.query;
  prototype.query = function tracedQuery(this: PgClient, ...args: unknown[]): unknown {
    const config = args[0] as string | QueryConfig | undefined;
    const text = typeof config === 'string' ? config : config?.text;
    if (
      typeof text !== 'string' ||
      (typeof config === 'object' && config.submit !== undefined) ||
      TRANSACTION_CONTROL.test(text) ||
      !trace.getSpan(context.active())
    )
      return original.apply(this, args);
    const span = tracer.startSpan(sqlSpanName({ text, name: typeof config === 'object' ? config.name : undefined }), {
      kind: SpanKind.CLIENT,
      attributes: {
        'db.system': 'postgresql',
        'db.statement': statementAttribute(text),
        ...(this.database ? { 'db.name': this.database } : {}),
      },
    });
    const last = args.length - 1;
    if (typeof args[last] === 'function') args[last] = ending(span, args[last] as Callback);
    else if (typeof config === 'object' && typeof config.callback === 'function')
      args[0] = { ...config, callback: ending(span, config.callback) };
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (err) {
      end(span, err);
      throw err;
    }
    if (result instanceof Promise)
      return result.then(
        (value: unknown) => {
          end(span);
          return value;
        },
        (err: unknown) => {
          end(span, err);
          throw err;
        },
      );
    return result;
  };
  return () => {
    prototype.query = original;
  };
}

function ending(span: Span, callback: Callback): Callback {
  return function (this: unknown, err, result) {
    end(span, err);
    return callback.call(this, err, result);
  };
}

function end(span: Span, err?: unknown): void {
  if (err) span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}
