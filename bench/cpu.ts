// Where the machine's CPU goes, read from /proc: the whole machine's busy seconds, the same by
// group of processes (the services, the servers they use, the bench), and a wait for the
// machine to go quiet before a measurement (what earlier work left running would otherwise be
// charged to it).
import { readdirSync, readFileSync } from 'node:fs';

/** CPU seconds the whole machine has spent not idle since boot (/proc/stat): every process, the bench's too. */
export function machineCpuSeconds(procStat = '/proc/stat'): number {
  const fields = readFileSync(procStat, 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal ...: idle and iowait are not work.
  const busy = fields.slice(0, 8).reduce((a, b) => a + b, 0) - fields[3] - fields[4];
  return busy / 100;
}

interface ProcessCpu {
  ppid: number;
  /** The command name (/proc/<pid>/stat's second field). */
  comm: string;
  /** User and system CPU seconds since it started, its threads included. */
  seconds: number;
}

/** Every process /proc shows now, by pid. */
function readProcesses(proc: string): Map<number, ProcessCpu> {
  const processes = new Map<number, ProcessCpu>();
  const ticksPerSecond = 100;
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`${proc}/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // The command name is in parentheses and may hold spaces: fields are counted after it.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    processes.set(Number(entry), {
      ppid: Number(fields[1]),
      comm: stat.slice(stat.indexOf('(') + 1, close),
      seconds: (Number(fields[11]) + Number(fields[12])) / ticksPerSecond,
    });
  }
  return processes;
}

function inTreeOf(processes: Map<number, ProcessCpu>, roots: number[]): (pid: number) => boolean {
  return (pid) => {
    for (let p: number | undefined = pid; p && p > 1; p = processes.get(p)?.ppid) if (roots.includes(p)) return true;
    return false;
  };
}

/** Where a drain's CPU went: the services, the two servers they use, the bench itself. */
export const CPU_GROUPS = ['api', 'worker', 'temporal', 'postgres', 'bench'] as const;
export type CpuGroup = (typeof CPU_GROUPS)[number];

/** The processes of the groups as /proc shows them at one moment: each one's group and CPU seconds so far. */
export type CpuSnapshot = Map<number, { group: CpuGroup; seconds: number }>;

/**
 * The processes of each group now: the API's and the worker's process trees, the Temporal
 * server and PostgreSQL (by command name: every backend is a `postgres` process), and the
 * bench's own process (load generator, receiver, OTLP sink). What the machine spent beyond
 * these is other tenants', the kernel's, and that of processes that exited meanwhile.
 */
export function cpuSnapshot(roots: { api: number; worker: number; bench: number }, proc = '/proc'): CpuSnapshot {
  const processes = readProcesses(proc);
  const inApi = inTreeOf(processes, [roots.api]);
  const inWorker = inTreeOf(processes, [roots.worker]);
  const snapshot: CpuSnapshot = new Map();
  for (const [pid, { comm, seconds }] of processes) {
    const group: CpuGroup | undefined =
      pid === roots.bench
        ? 'bench'
        : inApi(pid)
          ? 'api'
          : inWorker(pid)
            ? 'worker'
            : comm.startsWith('temporal')
              ? 'temporal'
              : comm === 'postgres'
                ? 'postgres'
                : undefined;
    if (group) snapshot.set(pid, { group, seconds });
  }
  return snapshot;
}

/**
 * CPU seconds each group spent between two snapshots, process by process: one that started
 * meanwhile counts whole, one that exited meanwhile not at all (subtracting its lifetime's CPU,
 * as a difference of sums would, charged a group with minus what a closed connection's backend
 * had spent since it opened).
 */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): Record<CpuGroup, number> {
  const groups: Record<CpuGroup, number> = { api: 0, worker: 0, temporal: 0, postgres: 0, bench: 0 };
  for (const [pid, { group, seconds }] of after) groups[group] += seconds - (before.get(pid)?.seconds ?? 0);
  return groups;
}

/** How busy the machine was over the last window of a wait for quiet, and how long the wait took. */
export interface Quiet {
  quiet: boolean;
  waitedSeconds: number;
  /** Cores busy over the last window, every process counted. */
  busyCores: number;
  /** The same by group (cpuSnapshot), when the wait was given the roots. */
  byGroup?: Record<CpuGroup, number>;
}

/**
 * Resolves once the machine's busy CPU over a window of `windowMs` is below `busyCores` cores,
 * or after `maxMs` (then `quiet` is false): a measured drain should not pay for the vacuum,
 * timers or deliveries that earlier work left running.
 */
export async function machineQuiet(options: {
  busyCores: number;
  windowMs: number;
  maxMs: number;
  roots?: { api: number; worker: number; bench: number };
  procStat?: string;
  proc?: string;
}): Promise<Quiet> {
  const started = performance.now();
  const groups = () => (options.roots ? cpuSnapshot(options.roots, options.proc) : undefined);
  for (;;) {
    const before = { machine: machineCpuSeconds(options.procStat), groups: groups() };
    const windowStarted = performance.now();
    await new Promise((resolve) => setTimeout(resolve, options.windowMs));
    const seconds = (performance.now() - windowStarted) / 1000;
    const after = { machine: machineCpuSeconds(options.procStat), groups: groups() };
    const busyCores = (after.machine - before.machine) / seconds;
    const spent = before.groups && after.groups ? cpuBetween(before.groups, after.groups) : undefined;
    const byGroup = spent
      ? (Object.fromEntries(CPU_GROUPS.map((group) => [group, spent[group] / seconds])) as Record<CpuGroup, number>)
      : undefined;
    const waitedSeconds = (performance.now() - started) / 1000;
    const quiet = busyCores < options.busyCores;
    if (quiet || waitedSeconds * 1000 >= options.maxMs) return { quiet, waitedSeconds, busyCores, byGroup };
  }
}

/**
 * How quiet the machine must be before a measurement starts (busy cores over a window, every
 * process counted; an idle stack polls at a few hundredths of a core), and how long to wait at most.
 */
const QUIET_BEFORE_MEASURING = { busyCores: 0.2, windowMs: 2_000, maxMs: 180_000 };

/**
 * Waits, before a measurement, for what earlier work left running (deliveries, timers, vacuum,
 * workflows completing) to finish, so the measurement does not pay for it; logs what was still
 * busy when it had to wait.
 */
export async function quietBeforeMeasuring(
  roots: { api: number; worker: number; bench: number },
  log: (line: string) => void,
  tag: string,
): Promise<Quiet> {
  const quiet = await machineQuiet({ ...QUIET_BEFORE_MEASURING, roots });
  if (quiet.quiet && quiet.waitedSeconds < (QUIET_BEFORE_MEASURING.windowMs * 1.5) / 1000) return quiet;
  const groups = CPU_GROUPS.map((group) => `${group} ${quiet.byGroup![group].toFixed(2)}`).join(', ');
  log(
    `${tag}: ${quiet.quiet ? 'quiet' : 'still busy'} after ${quiet.waitedSeconds.toFixed(0)} s (${quiet.busyCores.toFixed(2)} cores busy: ${groups})`,
  );
  return quiet;
}
