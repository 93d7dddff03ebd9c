// What makes two submissions "the same event" (API.md: the same id with other content is
// id_conflict). The fingerprint is a hash of the event's canonical JSON; an authorization's
// state is kept out of it because the reversal of an authorization is the same id sent
// again with state `reversed`, a legitimate change rather than a conflict.
import { hash } from 'node:crypto';
import type { EventKind, IngestedEvent } from './schemas';
import { toInstant } from '../../core/timestamp';
import { canonicalJson } from '../../core/canonical-json';

export function fingerprint(kind: EventKind, event: IngestedEvent): string {
  // Built key by key: an object rest spread cost as much as the hash (bench/, CPU profile).
  const content: Record<string, unknown> = {};
  for (const key of Object.keys(event)) {
    if (key !== 'state' && key !== 'createdAt') content[key] = event[key as keyof IngestedEvent];
  }
  // Same instant written with another offset is the same event.
  content.createdAt = toInstant(event.createdAt).toISOString();
  if (kind === 'settled') content.state = event.state;
  return hash('sha256', canonicalJson(content), 'hex');
}

export type Resubmission = 'duplicate' | 'reversal' | 'conflict';

/** How a re-submitted event relates to the stored one with the same id. */
export function classifyResubmission(
  kind: EventKind,
  stored: { fingerprint: string; state: string },
  incoming: { fingerprint: string; state: string },
): Resubmission {
  if (stored.fingerprint !== incoming.fingerprint) return 'conflict';
  if (stored.state === incoming.state) return 'duplicate';
  if (kind === 'auth' && stored.state === 'approved' && incoming.state === 'reversed') return 'reversal';
  // The original approval arriving again after its reversal changes nothing.
  if (kind === 'auth' && stored.state === 'reversed' && incoming.state === 'approved') return 'duplicate';
  return 'conflict';
}
