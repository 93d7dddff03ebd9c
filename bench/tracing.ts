// Phase: tracing. The sustained lifecycle (bench/sustained.ts) with the API and the worker
// exporting traces over OTLP as the standard variables ask (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL; core/tracing.ts) to a sink in the bench process
// (bench/otlp-sink.ts), against the same lifecycle without tracing, in rounds whose order
// alternates: untraced then traced, traced then untraced, ... each drain on freshly restarted
// processes after a warm-up of 200 purchases, all on a bench issuer of the phase's own (the later
// phases' fixture groups keep the purchases they had). Alternating the order spreads over both
// sides what drifts during the phase: the shared machine, and what each drain leaves for the
// next (in a run of two rounds, the drain second in its round ran ~7 % slower, whichever side:
// the Temporal dev server spent more CPU per purchase as its in-memory store grew), so the
// rounds are even by default and each side drains first as often as second. The figure is the
// traced drains' mean rate as a share of the untraced ones'. Both sides take the same steps:
// restart, warm-up, a pause as long as the traced exporters need to go quiet, a wait for a
// quiet machine (bench/cpu.ts), the measured drain, the drain check; so neither pays for what
// the warm-up or an earlier phase left running, and a drain starts from the same state
// whichever side came before. Each measured drain counts the CPU seconds per purchase of the
// API, the worker, the Temporal server, PostgreSQL and the bench: the services' share is
// steadier than a rate when neighbours come and go, and the groups say where a difference
// went. A calibration run (BENCH_TRACING_CALIBRATION=1) disables the SDK on the traced side,
// to see what the procedure makes of two equal sides. The API and the worker are left
// untraced at the end.
import type { BenchConfig, TracingProtocol } from './config';
import type { BenchStack } from './stack';
import type { Receiver } from './receiver';
import { buildFixture, type Fixture } from './fixtures';
import { countsBetween, sinkQuiet, startOtlpSink, type OtlpCounts, type OtlpSink } from './otlp-sink';
import { CPU_GROUPS, cpuBetween, cpuSnapshot, machineCpuSeconds, quietBeforeMeasuring, type CpuGroup } from './cpu';
import { pendingAfterDrain, runLifecycleDrain, type DrainResult } from './sustained';

/** Purchases through freshly started processes before a measured drain: JIT, pools, caches. */
const WARM_UP = 200;
/** The batch span processors export every 5 s (OTEL_BSP_SCHEDULE_DELAY): quiet for longer means flushed. */
const EXPORT_QUIET_MS = 6_000;
/** The pause after every warm-up, either side: the traced one's last export, then quiet. */
const SETTLE_MS = 5_000 + EXPORT_QUIET_MS;

/** A measured drain and the CPU the API's processes, the worker's, and the whole machine spent on it. */
export type TracingDrain = DrainResult & {
  serviceCpuSeconds: number;
  apiCpuSeconds: number;
  machineCpuSeconds: number;
  /** The same drain's CPU by group (bench/cpu.ts). */
  cpuSeconds: Record<CpuGroup, number>;
};

export interface TracingResult {
  protocol: TracingProtocol;
  /** A calibration run: the "traced" side ran with OTEL_SDK_DISABLED=true (BenchConfig.tracingCalibration). */
  calibration: boolean;
  /** Each round's untraced drain, then its traced one. */
  rounds: Array<{ untraced: TracingDrain; traced: TracingDrain }>;
  /** The drain check after the last drain, over every purchase of the phase (all through, trial balance 0). */
  drain: Awaited<ReturnType<typeof pendingAfterDrain>>;
  /** What reached the sink from each traced drain's first offer until the exporters went quiet, summed. */
  exported: OtlpCounts;
  /** Seconds the restart with tracing took, until the API was ready and the worker polling (the last one). */
  restartSeconds: number;
}

interface Options {
  stack: BenchStack;
  receiver: Receiver;
  config: BenchConfig;
  runId: string;
  log: (line: string) => void;
  /** The 1-minute load average, taken as each drain begins. */
  onDrainStart(drain: 'untraced' | 'traced', round: number): void;
}

/** Which side of a round drains first: untraced in odd rounds, traced in even ones (U T, T U, U T...). */
export function roundOrder(round: number): Array<'untraced' | 'traced'> {
  return round % 2 === 1 ? ['untraced', 'traced'] : ['traced', 'untraced'];
}

export async function measureTracing(options: Options): Promise<TracingResult> {
  const { config, log } = options;
  const sink = await startOtlpSink();
  try {
    const fixture = await ownFixture(options);
    const rounds: TracingResult['rounds'] = [];
    const totals = { exported: undefined as OtlpCounts | undefined, restartSeconds: 0 };
    let drained: TracingResult['drain'] | undefined;
    for (let round = 1; round <= config.tracingRounds; round++) {
      log(
        `tracing: round ${round} of ${config.tracingRounds}, ${roundOrder(round).join(' then ')}, ${config.tracingBacklog} each`,
      );
      const result: Partial<TracingResult['rounds'][number]> = {};
      for (const side of roundOrder(round)) {
        result[side] = await drainSide(options, sink, fixture, side, round, totals);
        // After either side, so that the next drain starts from the same state whichever it follows.
        drained = await pendingAfterDrain(options.stack.databaseUrl, fixture.issuerId, `sus-${options.runId}-`, 30_000);
      }
      const { untraced, traced } = result as TracingResult['rounds'][number];
      rounds.push({ untraced, traced });
      log(
        `tracing: round ${round}: untraced ${untraced.steadyPerSecond.toFixed(1)}/s, traced ${traced.steadyPerSecond.toFixed(1)}/s (${((traced.steadyPerSecond / untraced.steadyPerSecond) * 100).toFixed(1)} %)`,
      );
    }
    log('tracing: restarting the API and the worker without tracing');
    await restore(options, sink, fixture);
    return {
      protocol: config.tracingProtocol,
      calibration: config.tracingCalibration,
      rounds,
      drain: drained!,
      exported: totals.exported!,
      restartSeconds: totals.restartSeconds,
    };
  } finally {
    await sink.close();
  }
}

/** One side of a round: restart (exporting to the sink when traced), warm up, drain, measure. */
async function drainSide(
  options: Options,
  sink: OtlpSink,
  fixture: Fixture,
  side: 'untraced' | 'traced',
  round: number,
  totals: { exported: OtlpCounts | undefined; restartSeconds: number },
): Promise<TracingDrain> {
  const { stack, config } = options;
  const tag = `${side === 'traced' ? 't' : 'u'}${round}`;
  if (side === 'untraced') await stack.restartService();
  else {
    options.log(
      `tracing: restarting the API and the worker exporting over OTLP (${config.tracingProtocol}) to ${sink.endpoint}${config.tracingCalibration ? ', calibrating: with OTEL_SDK_DISABLED=true' : ''}`,
    );
    const restartStarted = performance.now();
    await stack.restartService({
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: config.tracingProtocol,
      ...(config.tracingCalibration ? { OTEL_SDK_DISABLED: 'true' } : {}),
    });
    totals.restartSeconds = (performance.now() - restartStarted) / 1000;
  }
  await drain(options, fixture, WARM_UP, `${tag}warm`);
  // Both sides wait as long after the warm-up: the traced processes export what it made within
  // one schedule delay, and the sink must then stay quiet (below) before the measured drain.
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  if (side === 'untraced') {
    await quietBeforeMeasuring(processRoots(options), options.log, `tracing: ${tag}`);
    options.onDrainStart(side, round);
    return measured(options, fixture, tag);
  }
  await sinkQuiet(sink, EXPORT_QUIET_MS, 60_000);
  await quietBeforeMeasuring(processRoots(options), options.log, `tracing: ${tag}`);
  const before = sink.counts();
  options.onDrainStart(side, round);
  const result = await measured(options, fixture, tag);
  await sinkQuiet(sink, EXPORT_QUIET_MS, 60_000);
  totals.exported = sum(totals.exported, countsBetween(before, sink.counts()));
  return result;
}

/** The processes whose trees are the API's, the worker's and the bench's CPU groups, as they run now. */
function processRoots({ stack }: Options): { api: number; worker: number; bench: number } {
  return { api: stack.api.pid!, worker: stack.worker.pid!, bench: process.pid };
}

/** The traced drains' mean rate as a share of the untraced ones', and the same for CPU per purchase. */
export function tracingShares(rounds: TracingResult['rounds']): {
  throughputPct: number;
  cpuPct: number;
  machineCpuPct: number;
} {
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const rate = (side: 'untraced' | 'traced') => mean(rounds.map((r) => r[side].steadyPerSecond));
  const perPurchase = (side: 'untraced' | 'traced', of: 'serviceCpuSeconds' | 'machineCpuSeconds') =>
    rounds.reduce((a, r) => a + r[side][of], 0) / rounds.reduce((a, r) => a + r[side].completed, 0);
  const share = (of: 'serviceCpuSeconds' | 'machineCpuSeconds') =>
    (perPurchase('traced', of) / perPurchase('untraced', of)) * 100;
  return {
    throughputPct: (rate('traced') / rate('untraced')) * 100,
    cpuPct: share('serviceCpuSeconds'),
    machineCpuPct: share('machineCpuSeconds'),
  };
}

async function measured(options: Options, fixture: Fixture, tag: string): Promise<TracingDrain> {
  const roots = processRoots(options);
  const cpu = () => ({ groups: cpuSnapshot(roots), machine: machineCpuSeconds() });
  const before = cpu();
  const result = await drain(options, fixture, options.config.tracingBacklog, tag);
  const after = cpu();
  const cpuSeconds = cpuBetween(before.groups, after.groups);
  const drained: TracingDrain = {
    ...result,
    serviceCpuSeconds: cpuSeconds.api + cpuSeconds.worker,
    apiCpuSeconds: cpuSeconds.api,
    machineCpuSeconds: after.machine - before.machine,
    cpuSeconds,
  };
  options.log(`tracing: ${tag}: ${result.steadyPerSecond.toFixed(1)}/s; ${cpuPerPurchase(drained)}`);
  return drained;
}

/** A drain's CPU milliseconds per purchase, by group and for the whole machine. */
export function cpuPerPurchase(drain: TracingDrain): string {
  const ms = (seconds: number) => ((seconds / drain.completed) * 1000).toFixed(1);
  const groups = CPU_GROUPS.map((group) => `${group} ${ms(drain.cpuSeconds[group])}`).join(', ');
  const rest = drain.machineCpuSeconds - CPU_GROUPS.reduce((s, group) => s + drain.cpuSeconds[group], 0);
  return `CPU ms per purchase: ${groups}, rest ${ms(rest)}, machine ${ms(drain.machineCpuSeconds)}`;
}

function sum(a: OtlpCounts | undefined, b: OtlpCounts): OtlpCounts {
  if (!a) return b;
  const spansByService = { ...a.spansByService };
  for (const [service, n] of Object.entries(b.spansByService))
    spansByService[service] = (spansByService[service] ?? 0) + n;
  return {
    requests: a.requests + b.requests,
    bytes: a.bytes + b.bytes,
    spans: a.spans === null || b.spans === null ? null : a.spans + b.spans,
    spansByService,
    unreadable: a.unreadable + b.unreadable,
    other: a.other + b.other,
  };
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
