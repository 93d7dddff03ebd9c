// Structured JSON logs. Child loggers carry request, issuer and workflow ids. In a terminal
// (`npm start`) the same records are printed as readable lines (core/log-format.ts); anywhere
// else, and always with NODE_ENV=production, they stay JSON for the machines that read them.
import pino from 'pino';
import { formatLogLine, readableLogs } from './log-format';

export type Logger = pino.Logger;

/**
 * Lines are buffered and written to stdout in chunks rather than one write each: at a few
 * thousand requests a second an access log line per request would otherwise cost a system
 * call per request. pino flushes the buffer when the process exits.
 */
export function createLogger(
  level: string = process.env.LOG_LEVEL ?? 'info',
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
  return pino(options, pino.destination({ dest: 1, sync: false, minLength: 4096 }));
}
