// What the figures ran on, and how busy the machine already was (another test run on the
// same 2 cores shows as load average).
import os from 'node:os';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  platform: string;
  loadAverage1m: number;
}

export function describeMachine(): Machine {
  return {
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage1m: Math.round(os.loadavg()[0] * 100) / 100,
  };
}
