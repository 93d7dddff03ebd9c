// The arm of a group in an offer (API.md, "Targeted offers (audiences, automatic activation,
// holdouts, lift)"): `control` when a stable hash of (offer id, group id) falls under the offer's
// `holdoutBps`, else `treated`. The arm is decided once, at the group's entry, and stored; this
// function is what decides it, so it must give the same answer on every process, Node version,
// restart and replay: SHA-256 of a fixed string, nothing seeded, nothing random. Why a hash and not
// a draw, and the same bucket in SQL: docs/decisions/0047-holdout-and-lift.md.
import { hash } from 'node:crypto';

export type HoldoutArm = 'treated' | 'control';

/** Buckets a pair falls into: one per basis point, so `holdoutBps` is the number of control buckets. */
export const HOLDOUT_BUCKETS = 10_000;
/** The largest holdout an offer may have: a control larger than the treated arm buys nothing. */
export const MAX_HOLDOUT_BPS = 5_000;

const TWO_TO_THE_32 = 4_294_967_296;

// The prefix keeps this hash independent of any other hash someone takes of the same pair
// later (a staged rollout, a second experiment): without it, the two would split groups alike.
const DOMAIN = 'holdout';

function assertId(value: string, name: string): void {
  // ':' separates the parts: an id containing it could make two different pairs one string.
  if (typeof value !== 'string' || value.length === 0 || value.includes(':'))
    throw new RangeError(`${name} must be a non-empty id without ':', got ${JSON.stringify(value)}`);
}

/**
 * The pair's bucket, 0..9999: the first 32 bits of SHA-256(`holdout:<offerId>:<groupId>`, UTF-8)
 * read big-endian as an unsigned integer u, scaled as floor(u x 10000 / 2^32). Scaling, not
 * modulo, keeps the buckets in the hash's order; either way a bucket holds 429,496 or 429,497 of
 * the 2^32 values, so a holdout's share is off by less than 2^-32. The product stays below 2^46,
 * exact in a double.
 */
export function holdoutBucket(offerId: string, groupId: string): number {
  assertId(offerId, 'offerId');
  assertId(groupId, 'groupId');
  // The one-shot hash (a string is hashed as its UTF-8 bytes): a Hash object per pair costs twice
  // as much, and an enrolment run hashes every group of the issuer.
  const digest = hash('sha256', `${DOMAIN}:${offerId}:${groupId}`, 'buffer');
  const bucket = Math.floor((digest.readUInt32BE(0) * HOLDOUT_BUCKETS) / TWO_TO_THE_32);
  if (!Number.isInteger(bucket) || bucket < 0 || bucket >= HOLDOUT_BUCKETS) throw new Error(`bucket ${bucket}`);
  return bucket;
}

/**
 * The group's arm in the offer. Buckets under `holdoutBps` are control, so a larger holdout only
 * ever adds groups to the control of a smaller one: arms nest, and 0 bps has no control at all.
 */
export function holdoutArm(offerId: string, groupId: string, holdoutBps: number): HoldoutArm {
  if (!Number.isInteger(holdoutBps) || holdoutBps < 0 || holdoutBps > MAX_HOLDOUT_BPS)
    throw new RangeError(`holdoutBps ${holdoutBps} is outside 0..${MAX_HOLDOUT_BPS}`);
  return holdoutBucket(offerId, groupId) < holdoutBps ? 'control' : 'treated';
}
