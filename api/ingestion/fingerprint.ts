// What makes two submissions "the same event" (API.md: the same id with other content is
// id_conflict). The fingerprint is a hash of the event's canonical JSON; an authorization's
// state is kept out of it because the reversal of an authorization is the same id sent
// again with state `reversed`, a legitimate change rather than a conflict.
import { hash } from 'node:crypto';
import type { EventKind, IngestedEvent } from './schemas';
import { toInstant } from '../../core/timestamp';
import { canonicalJson } from '../../core/canonical-json';

export function fingerprint(kind: EventKind, event: IngestedEvent): string {
  // Built key by key in sorted order: an event is flat (its schema allows scalars only), and
  // for a flat object with its keys in sorted order, plain JSON.stringify writes the canonical
  // text itself, at a third of canonicalJson's cost (bench/, CPU profile). Anything else takes
  // canonicalJson; the test pins both to the hashes of the first version.
  const content: Record<string, unknown> = {};
  let flat = true;
  for (const key of Object.keys(event).sort()) {
    if (key === 'state' && kind !== 'settled') continue;
    // Same instant written with another offset is the same event.
    const value = key === 'createdAt' ? toInstant(event.createdAt).toISOString() : event[key as keyof IngestedEvent];
    // An integer-like key would be written first whatever its place (JSON.stringify's order).
    if ((value !== null && typeof value === 'object') || isIndexLike(key)) flat = false;
    content[key] = value;
  }
  return hash('sha256', flat ? JSON.stringify(content) : canonicalJson(content), 'hex');
}

const isIndexLike = (key: string) => key.length > 0 && key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57;

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
