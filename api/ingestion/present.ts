// Ingestion's answers that are not event failures: an issuer's lag.
import type { IssuerBacklog } from './store';

export function presentLag(backlog: IssuerBacklog, waitingEventsLimit: number, now: Date) {
  const ageMs = backlog.oldestQueuedAt ? Math.max(0, now.getTime() - backlog.oldestQueuedAt.getTime()) : 0;
  return {
    pendingEvents: backlog.waiting + backlog.inFlight,
    oldestPendingAgeSeconds: Math.floor(ageMs / 1000),
    waitingEvents: backlog.waiting,
    waitingEventsLimit,
  };
}
