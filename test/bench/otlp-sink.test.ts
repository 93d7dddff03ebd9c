// The tracing phase's sink (bench/otlp-sink.ts) takes what the service's OTLP exporters send:
// both encodings answered so that the exporter counts the export a success, requests and bytes
// counted, and a JSON body's spans counted by service.
import assert from 'node:assert/strict';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { countSpans, countsBetween, startOtlpSink, type OtlpSink } from '../../bench/otlp-sink';

/** Three finished spans of one service: a parent and two children. */
async function someSpans(service: string): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource: new Resource({ 'service.name': service }) });
  provider.addSpanProcessor(new SimpleSpanProcessor(memory));
  const tracer = provider.getTracer('bench-test');
  tracer.startActiveSpan('parent', (parent) => {
    tracer.startSpan('child 1').end();
    tracer.startSpan('child 2').end();
    parent.end();
  });
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  return spans;
}

async function exportTo(exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  try {
    return await new Promise<ExportResult>((resolve) => exporter.export(spans, resolve));
  } finally {
    await exporter.shutdown();
  }
}

describe('bench/otlp-sink', () => {
  let sink: OtlpSink;
  beforeEach(async () => (sink = await startOtlpSink()));
  afterEach(() => sink.close());

  it('takes OTLP/JSON exports and counts their requests, bytes and spans by service', async () => {
    const url = `${sink.endpoint}/v1/traces`;
    const before = sink.counts();
    assert.equal(
      (await exportTo(new JsonExporter({ url }), await someSpans('rewards-api'))).code,
      ExportResultCode.SUCCESS,
    );
    assert.equal(
      (await exportTo(new JsonExporter({ url }), await someSpans('rewards-worker'))).code,
      ExportResultCode.SUCCESS,
    );
    const counts = countsBetween(before, sink.counts());
    assert.equal(counts.requests, 2);
    assert.ok(counts.bytes > 500, String(counts.bytes));
    assert.equal(counts.spans, 6);
    assert.deepEqual(counts.spansByService, { 'rewards-api': 3, 'rewards-worker': 3 });
    assert.equal(counts.unreadable, 0);
    assert.ok(sink.lastRequestAtMs() > 0);
  });

  it('takes OTLP/protobuf exports, counting requests and bytes but not spans', async () => {
    const result = await exportTo(new ProtobufExporter({ url: `${sink.endpoint}/v1/traces` }), await someSpans('api'));
    assert.equal(result.code, ExportResultCode.SUCCESS);
    const counts = sink.counts();
    assert.equal(counts.requests, 1);
    assert.ok(counts.bytes > 100, String(counts.bytes));
    assert.equal(counts.spans, null);
  });

  it('answers anything else 404 and counts it apart', async () => {
    const res = await fetch(`${sink.endpoint}/v1/metrics`, { method: 'POST', body: '{}' });
    assert.equal(res.status, 404);
    assert.deepEqual({ requests: sink.counts().requests, other: sink.counts().other }, { requests: 0, other: 1 });
  });

  it('counts the spans of every resource and scope of a body', () => {
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a' } }] },
          scopeSpans: [{ spans: [{}, {}] }, { spans: [{}] }],
        },
        { scopeSpans: [{ spans: [{}] }, {}] },
        { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'a' } }] }, scopeSpans: [] },
      ],
    };
    assert.deepEqual(countSpans(body), { a: 3, unknown: 1 });
    assert.deepEqual(countSpans({}), {});
    assert.deepEqual(countSpans(null), {});
  });
});
