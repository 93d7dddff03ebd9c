// Phase: tracing. The sustained lifecycle (bench/sustained.ts) again, with the API and the
// worker exporting traces over OTLP as the standard variables ask (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL; core/tracing.ts) to a sink in the bench process
// (bench/otlp-sink.ts), as a share of the lifecycle without tracing measured in the same run:
// the sustained phase's, or, run alone (`--only tracing`), one measured first on the same stack
// the same way. The API and the worker are restarted with the variables (startTracing runs at
// process start), and again without them afterwards when later phases follow. Each drain runs
// on restarted processes after a warm-up of 200 purchases, on a bench issuer of its own, so the
// later phases' fixture groups keep the purchases they had.
import type { BenchConfig, TracingProtocol } from './config';
import type { BenchStack } from './stack';
import type { Receiver } from './receiver';
import { buildFixture, type Fixture } from './fixtures';
import { countsBetween, sinkQuiet, startOtlpSink, type OtlpCounts, type OtlpSink } from './otlp-sink';
import { pendingAfterDrain, runLifecycleDrain, type DrainResult } from './sustained';

/** Purchases through freshly started processes before a measured drain: JIT, pools, caches. */
const WARM_UP = 200;
/** The batch span processors export every 5 s (OTEL_BSP_SCHEDULE_DELAY): quiet for longer means flushed. */
const EXPORT_QUIET_MS = 6_000;

export interface TracingResult {
  protocol: TracingProtocol;
  /** The lifecycle without tracing it is compared with. */
  untraced: DrainResult & { measuredBy: 'sustained phase' | 'this phase' };
  traced: DrainResult;
  /** The traced backlog's drain check. */
  drain: Awaited<ReturnType<typeof pendingAfterDrain>>;
  /** What reached the sink from the traced drain's first offer until the exporters went quiet. */
  exported: OtlpCounts;
  /** Seconds the restart with tracing took, until the API was ready and the worker polling. */
  restartSeconds: number;
}

interface Options {
  stack: BenchStack;
  receiver: Receiver;
  config: BenchConfig;
  runId: string;
  log: (line: string) => void;
  /** The sustained phase's lifecycle; without it, this phase measures its own first. */
  untraced?: DrainResult;
  /** Restart the API and the worker without tracing at the end (later phases follow). */
  restore: boolean;
  /** The 1-minute load average, taken as each drain begins. */
  onDrainStart(drain: 'untraced' | 'traced'): void;
}

export async function measureTracing(options: Options): Promise<TracingResult> {
  const { stack, config, log } = options;
  const sink = await startOtlpSink();
  try {
    let untraced: TracingResult['untraced'];
    if (options.untraced) untraced = { ...options.untraced, measuredBy: 'sustained phase' };
    else {
      log(`tracing: the lifecycle without tracing first, a backlog of ${config.tracingBacklog}`);
      const fixture = await ownFixture(options);
      await drain(options, fixture, WARM_UP, 'warm');
      options.onDrainStart('untraced');
      untraced = { ...(await drain(options, fixture, config.tracingBacklog, 'base')), measuredBy: 'this phase' };
      log(`tracing: untraced lifecycle ${untraced.steadyPerSecond.toFixed(1)}/s steady`);
    }
    log(
      `tracing: restarting the API and the worker exporting over OTLP (${config.tracingProtocol}) to ${sink.endpoint}`,
    );
    const restartStarted = performance.now();
    await stack.restartService({
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: config.tracingProtocol,
    });
    const restartSeconds = (performance.now() - restartStarted) / 1000;
    const fixture = await ownFixture(options);
    await drain(options, fixture, WARM_UP, 'trcwarm');
    await sinkQuiet(sink, EXPORT_QUIET_MS, 60_000);
    log(`tracing: a backlog of ${config.tracingBacklog} settled events through the traced lifecycle`);
    const before = sink.counts();
    options.onDrainStart('traced');
    const traced = await drain(options, fixture, config.tracingBacklog, 'trc');
    const drained = await pendingAfterDrain(stack.databaseUrl, fixture.issuerId, `sus-${options.runId}-trc-`, 30_000);
    await sinkQuiet(sink, EXPORT_QUIET_MS, 60_000);
    const exported = countsBetween(before, sink.counts());
    log(
      `tracing: traced lifecycle ${traced.steadyPerSecond.toFixed(1)}/s steady (${((traced.steadyPerSecond / untraced.steadyPerSecond) * 100).toFixed(1)} % of untraced); sink received ${exported.requests} requests, ${exported.bytes} bytes, ${exported.spans ?? 'uncounted'} spans`,
    );
    if (options.restore) {
      log('tracing: restarting the API and the worker without tracing');
      await restore(options, sink, fixture);
    }
    return {
      protocol: config.tracingProtocol,
      untraced,
      traced,
      drain: drained,
      exported,
      restartSeconds,
    };
  } finally {
    await sink.close();
  }
}

/** Back to the stack the other phases measure, warmed up as the traced processes were. */
async function restore(options: Options, sink: OtlpSink, fixture: Fixture): Promise<void> {
  await options.stack.restartService();
  const before = sink.counts().requests;
  await drain(options, fixture, WARM_UP, 'rstwarm');
  // Exports still queued in the stopped processes were flushed at their exit; none may come now.
  if (sink.counts().requests !== before) throw new Error('tracing: the restarted processes still export traces');
}

/** An issuer of the phase's own, with the bench's fixture shape, through the API as it runs now. */
function ownFixture({ stack, config, receiver }: Options): Promise<Fixture> {
  return buildFixture({
    apiUrl: stack.apiUrl,
    operatorToken: stack.operatorToken,
    groups: config.groups,
    webhookUrl: receiver.url,
  });
}

function drain(options: Options, fixture: Fixture, backlog: number, tag: string): Promise<DrainResult> {
  return runLifecycleDrain({
    apiUrl: options.stack.apiUrl,
    fixture,
    receiver: options.receiver,
    backlog,
    timeoutMs: options.config.drainTimeoutSeconds * 1000,
    runId: `${options.runId}-${tag}`,
    onTransaction: () => undefined,
  });
}
