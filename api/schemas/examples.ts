// Values the examples of /openapi.json share, so that the ids of one example lead to the others
// (the group of the Group example is the chgId of the RewardSummary example, and so on).
// Every example is checked against its schema by test/api/openapi-published.test.ts.
import type { IdPrefix } from '../../core/ids';

// Fixed, recognisable UUIDs: the first id of each kind ends in ...0001, the second in ...0002.
const uuid = (n: number) => `6f1c2a9e-4b7d-4e21-9c3a-${String(n).padStart(12, '0')}`;

/** The n-th example id of a kind (1-based). */
export function exampleId(prefix: IdPrefix, n = 1): string {
  return `${prefix}_${uuid(n)}`;
}

export const EXAMPLE_TIME = '2026-03-14T15:09:26.000Z';
export const EXAMPLE_LATER = '2026-03-17T15:09:26.000Z';
export const EXAMPLE_EXPIRY = '2027-03-14T15:09:26.000Z';
