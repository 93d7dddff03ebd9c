// A group's enrolments in targeted offers as read, kept in the API process for its next lists
// (decision 0064). An enrolment is decided once and stays: it is inserted ON CONFLICT DO NOTHING
// (core/domain/enrolment.ts, enrolment-chunk.ts), nothing updates or deletes offer_enrolment, and
// its keys are RESTRICTed. So an arm once read is true for good, and a list asks its statement
// only for the enrolments of its reach it has not read yet: in the steady state none, and then the
// statement without the enrolments (group-offers.ts) does not touch the group's enrolment index.
//
// Only arms found are kept: an offer asked for and not found may be enrolled the next moment.
// Kept by group id alone: a group's id is unique whatever its issuer, and what is kept is used
// only once the statement has found the group to be the caller's.

/**
 * Arms kept per process, whatever the groups: a Map entry each (about 100 bytes) and one more per
 * group for its own Map, so about 40 MB.
 */
const KNOWN_ARMS = 400_000;

/** By group id, least recently read first (a Map iterates in insertion order): offer id -> arm. */
const armsByGroup = new Map<string, Map<string, string>>();
let knownArms = 0;
const NONE: ReadonlyMap<string, string> = new Map();

/** The group's arms read so far, by offer id ('-' for a group stored outside the audience). */
export function knownArmsOf(chgId: string): ReadonlyMap<string, string> | undefined {
  return armsByGroup.get(chgId);
}

/**
 * Adds the arms just read to the group's, marks it the latest read, and drops the groups read
 * least recently beyond the bound (never this one). Returns every arm known for the group.
 */
export function rememberArms(chgId: string, found: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  const arms = armsByGroup.get(chgId);
  // A group enrolled in nothing read yet takes no room.
  if (!arms && found.size === 0) return NONE;
  const kept = arms ?? new Map<string, string>();
  if (arms) armsByGroup.delete(chgId);
  else knownArms++;
  armsByGroup.set(chgId, kept);
  for (const [offerId, arm] of found) {
    if (!kept.has(offerId)) knownArms++;
    kept.set(offerId, arm);
  }
  for (const [oldest, dropped] of armsByGroup) {
    if (knownArms <= KNOWN_ARMS || oldest === chgId) break;
    armsByGroup.delete(oldest);
    knownArms -= dropped.size + 1;
  }
  return kept;
}
