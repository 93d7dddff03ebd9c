// Structured JSON logs. Child loggers carry request, issuer and workflow ids.
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string = process.env.LOG_LEVEL ?? 'info', name = 'rewards'): Logger {
  return pino({ name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
