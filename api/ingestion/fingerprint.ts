// What makes two submissions "the same event" (API.md: the same id with other content is
// id_conflict). The fingerprint is a hash of the event's canonical JSON; an authorization's
// state is kept out of it because the reversal of an authorization is the same id sent
// again with state `reversed`, a legitimate change rather than a conflict.
import { createHash } from 'node:crypto';
import type { EventKind, IngestedEvent } from './schemas';
import { toInstant } from '../../core/timestamp';
import { canonicalJson } from '../../core/canonical-json';

export function fingerprint(kind: EventKind, event: IngestedEvent): string {
  const { state, createdAt, ...rest } = event;
  const content = {
    ...rest,
    // Same instant written with another offset is the same event.
    createdAt: toInstant(createdAt).toISOString(),
    ...(kind === 'settled' ? { state } : {}),
  };
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
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
