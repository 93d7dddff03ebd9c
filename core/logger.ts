// Structured JSON logs. Child loggers carry request, issuer and workflow ids.
import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Lines are buffered and written to stdout in chunks rather than one write each: at a few
 * thousand requests a second an access log line per request would otherwise cost a system
 * call per request. pino flushes the buffer when the process exits.
 */
export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'rewards'): Logger {
  return pino(
    { name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 1, sync: false, minLength: 4096 }),
  );
}
