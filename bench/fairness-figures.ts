// What the fairness phase (bench/fairness.ts) reads from what it measured, apart so that its
// unit tests need no stack: latency percentiles over the deliveries that were due (a delivery
// that never arrived counts as infinitely late), and the worker's memory over the phase, with
// its trend as a least-squares slope.

export interface LatencyFigures {
  /** Deliveries that were due, and those that arrived. */
  expected: number;
  received: number;
  lost: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Of the deliveries that arrived. */
  maxMs: number;
}

/**
 * Nearest-rank percentiles over `expected` deliveries of which `latenciesMs` arrived: a
 * percentile that falls among the missing ones is Infinity, so a p99 stays finite only while
 * fewer than 1 % are missing.
 */
export function latencyFigures(latenciesMs: readonly number[], expected: number): LatencyFigures {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const n = Math.max(expected, sorted.length);
  const at = (p: number) => {
    if (n === 0) return NaN;
    const rank = Math.min(n, Math.max(1, Math.ceil((p / 100) * n)));
    return rank <= sorted.length ? sorted[rank - 1] : Infinity;
  };
  return {
    expected,
    received: sorted.length,
    lost: Math.max(0, expected - sorted.length),
    p50Ms: at(50),
    p95Ms: at(95),
    p99Ms: at(99),
    maxMs: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
  };
}

export interface MemorySample {
  /** Seconds since the load began (negative: before it). */
  atS: number;
  rssMiB: number;
}

export interface MemoryFigures {
  startMiB: number;
  maxMiB: number;
  endMiB: number;
  /** Least-squares slope of the samples in the window, MiB per minute. */
  slopeMiBPerMinute: number;
  window: { fromS: number; toS: number; samples: number };
}

/** The least-squares slope of rssMiB over time, per minute; NaN with fewer than 2 instants. */
export function slopePerMinute(samples: readonly MemorySample[]): number {
  if (samples.length < 2) return NaN;
  const meanT = samples.reduce((s, x) => s + x.atS, 0) / samples.length;
  const meanM = samples.reduce((s, x) => s + x.rssMiB, 0) / samples.length;
  let covariance = 0;
  let variance = 0;
  for (const { atS, rssMiB } of samples) {
    covariance += (atS - meanT) * (rssMiB - meanM);
    variance += (atS - meanT) ** 2;
  }
  return variance === 0 ? NaN : (covariance / variance) * 60;
}

/**
 * Start, peak and end of every sample (in time order), and the trend of those in
 * [fromS, toS]: the steady part of the load, after the warm-up in which a process's heap
 * grows to its working size.
 */
export function memoryFigures(samples: readonly MemorySample[], fromS: number, toS: number): MemoryFigures {
  const inWindow = samples.filter((s) => s.atS >= fromS && s.atS <= toS);
  const values = samples.map((s) => s.rssMiB);
  return {
    startMiB: values.length > 0 ? values[0] : NaN,
    maxMiB: values.length > 0 ? Math.max(...values) : NaN,
    endMiB: values.length > 0 ? values[values.length - 1] : NaN,
    slopeMiBPerMinute: slopePerMinute(inWindow),
    window: { fromS, toS, samples: inWindow.length },
  };
}

/** VmRSS of a /proc/<pid>/status text, in MiB; undefined when the line is missing. */
export function residentMiB(status: string): number | undefined {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match ? Number(match[1]) / 1024 : undefined;
}
