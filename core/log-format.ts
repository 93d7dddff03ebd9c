// Log lines for a person at a terminal. The service logs JSON (pino) because machines read it;
// under `npm start` in a terminal the same records are printed as one short line each, with
// the fields that matter to a developer after the message. Pure: a JSON line in, text out.

const LEVELS: Record<number, { label: string; color: number }> = {
  10: { label: 'TRACE', color: 90 },
  20: { label: 'DEBUG', color: 36 },
  30: { label: 'INFO', color: 32 },
  40: { label: 'WARN', color: 33 },
  50: { label: 'ERROR', color: 31 },
  60: { label: 'FATAL', color: 35 },
};

/** Fields every record has, shown in the line's head rather than among its details. */
const HEAD_FIELDS = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'err']);

/** Whether to print readable lines: only to a terminal, and never in production. */
export function readableLogs(out: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return out.isTTY === true && env.NODE_ENV !== 'production';
}

function value(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * `12:04:05.123 INFO  api: listening port=3000`, then an error's stack on the lines below.
 * A line that is not a JSON object (a stray write) is passed through unchanged.
 */
export function formatLogLine(line: string, colors = false): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  if (record === null || typeof record !== 'object') return line;
  const level = LEVELS[Number(record.level)] ?? { label: String(record.level), color: 0 };
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const label = colors ? `\u001b[${level.color}m${level.label.padEnd(5)}\u001b[0m` : level.label.padEnd(5);
  const name = typeof record.name === 'string' ? `${record.name}: ` : '';
  const details = Object.entries(record)
    .filter(([key]) => !HEAD_FIELDS.has(key))
    .map(([key, v]) => `${key}=${value(v)}`);
  const head = [time, label, `${name}${String(record.msg ?? '')}`, ...details].filter((s) => s !== '').join(' ');
  const err = record.err as { stack?: unknown; message?: unknown } | undefined;
  const stack = err && typeof err === 'object' ? String(err.stack ?? err.message ?? '') : '';
  return stack === '' ? `${head}\n` : `${head}\n${stack.replace(/^/gm, '    ')}\n`;
}
