// SQL spans (core/sql-spans.ts) on a stand-in for pg's Client.prototype: each call form pg
// accepts ends its span once, with the error when it fails; no span outside a recording parent,
// for transaction control, or for a submittable. The real client is traced in tracing.e2e.test.ts.
import assert from 'node:assert/strict';
import { context, propagation, trace, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { MAX_STATEMENT_CHARS, sqlSpanName, traceSql } from '../../core/sql-spans';

type Callback = (err: Error | null, result?: unknown) => void;

/** Answers like pg: a promise without a callback, the callback otherwise; `fail` makes it fail. */
class StandIn {
  database = 'rewards';
  calls: unknown[][] = [];
  query(...args: unknown[]): unknown {
    this.calls.push(args);
    const config = args[0] as { text?: string; callback?: Callback; submit?: unknown };
    const text = typeof config === 'string' ? config : config.text;
    const error = text?.includes('fail') ? new Error('relation does not exist') : null;
    if (typeof config === 'object' && config.submit) return config;
    const callback = (typeof args[args.length - 1] === 'function' ? args[args.length - 1] : config.callback) as
      Callback | undefined;
    if (callback) {
      setImmediate(() => callback(error, error ? undefined : { rows: [] }));
      return undefined;
    }
    return error ? Promise.reject(error) : Promise.resolve({ rows: [] });
  }
}

describe('SQL spans', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider();
  provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
  const tracer = provider.getTracer('test');
  const client = new StandIn();
  let untrace: () => void;

  before(() => {
    // The context manager the service's tracing registers (AsyncLocalStorage).
    provider.register();
    untrace = traceSql(tracer, StandIn.prototype as never);
  });
  after(() => {
    untrace();
    trace.disable();
    context.disable();
    propagation.disable();
  });
  beforeEach(() => exporter.reset());

  const inParent = <T>(fn: () => Promise<T>) =>
    tracer.startActiveSpan('parent', (parent) => fn().finally(() => parent.end()));
  const sqlSpans = () => exporter.getFinishedSpans().filter((s) => s.name !== 'parent');

  it('names a span by the prepared statement, else the first SQL word, and keeps the start of long statements', async () => {
    const long = `\n  SELECT ${'x, '.repeat(200)}1`;
    await inParent(async () => {
      await client.query({ name: 'settle_v3', text: 'SELECT 1', values: [] });
      await client.query(long, []);
    });
    const [named, cut] = sqlSpans();
    assert.equal(named.name, 'pg.query:settle_v3');
    assert.equal(cut.name, 'pg.query:SELECT');
    assert.equal(String(cut.attributes['db.statement']).length, MAX_STATEMENT_CHARS + 1);
    assert.equal(named.attributes['db.name'], 'rewards');
    assert.equal(
      named.parentSpanId,
      exporter
        .getFinishedSpans()
        .find((s) => s.name === 'parent')
        ?.spanContext().spanId,
    );
    assert.equal(sqlSpanName({ text: '   ' }), 'pg.query:SQL');
  });

  it('ends the span once for the promise, the callback and the config callback forms, failed ones with their error', async () => {
    await inParent(async () => {
      await client.query('SELECT 1');
      await assert.rejects(client.query('SELECT fail') as Promise<unknown>, /does not exist/);
      await new Promise<void>((resolve) => client.query('SELECT 2', [], () => resolve()));
      await new Promise<void>((resolve) =>
        client.query('SELECT fail', (err: Error | null) => (assert.ok(err), resolve())),
      );
      await new Promise<void>((resolve) => client.query({ text: 'SELECT 3', callback: () => resolve() }));
    });
    const spans = sqlSpans();
    assert.equal(spans.length, 5);
    assert.deepEqual(
      spans.map((s) => s.status.code),
      [SpanStatusCode.UNSET, SpanStatusCode.ERROR, SpanStatusCode.UNSET, SpanStatusCode.ERROR, SpanStatusCode.UNSET],
    );
    assert.equal(spans[1].status.message, 'relation does not exist');
  });

  it('records nothing outside a trace, for transaction control, or for a submittable', async () => {
    await client.query('SELECT 1');
    await inParent(async () => {
      await client.query('BEGIN; SET LOCAL statement_timeout = 200');
      await client.query('commit');
      await client.query('ROLLBACK');
      const cursor = { text: 'SELECT 1', submit: () => undefined };
      assert.equal(client.query(cursor), cursor, 'the submittable is passed through as it was');
    });
    assert.equal(trace.getSpan(context.active()), undefined);
    assert.deepEqual(sqlSpans(), []);
  });
});
