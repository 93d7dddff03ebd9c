// Structured JSON logs. Child loggers carry request, issuer and workflow ids. In a terminal
// (`npm start`) the same records are printed as readable lines (core/log-format.ts); anywhere
// else, and always with NODE_ENV=production, they stay JSON for the machines that read them.
import pino from 'pino';
import { formatLogLine, readableLogs } from './log-format';

export type Logger = pino.Logger;

/**
 * Lines are buffered and written to stdout in chunks rather than one write each: at a few
 * thousand requests a second an access log line per request would otherwise cost a system
 * call per request. pino flushes the buffer when the process exits, and a timer flushes it
 * every FLUSH_INTERVAL_MS, so that a quiet process (the dev stack's supervisor, a worker
 * between bursts) never holds a line back longer than that.
 */
export function createLogger(
  level: string,
  name = 'rewards',
  out: NodeJS.WriteStream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): Logger {
  const options = { name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (readableLogs(out, env)) {
    // A person reads these as they come: each line is written at once, and a terminal is slow
    // enough that buffering would only delay them.
    const colors = out.hasColors?.() ?? false;
    return pino(options, { write: (line: string) => out.write(formatLogLine(line, colors)) });
  }
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => flushQuietly(destination), FLUSH_INTERVAL_MS).unref();
  return pino(options, destination);
}

const FLUSH_INTERVAL_MS = 1_000;

function flushQuietly(destination: ReturnType<typeof pino.destination>): void {
  try {
    destination.flush();
  } catch {
    // Not ready yet (the file descriptor opens asynchronously) or already closed: the next
    // tick, or pino's own flush at exit, writes what is left.
  }
}
