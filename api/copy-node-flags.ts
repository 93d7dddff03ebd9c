// The Node flags of the API's copies (node:cluster). A read allocates much that dies with its
// request; with Node's own young generation (two 16 MB semi-spaces) a busy copy scavenges often,
// and what the requests in flight hold at each scavenge is copied, and after two promoted to the
// old generation, whose collections then cost more. A larger semi-space scavenges less often for
// the same requests in flight (docs/decisions/0066-api-young-generation.md).

const SEMI_SPACE_FLAG = '--max-semi-space-size';

/**
 * The flags the primary forks its copies with: its own, plus the semi-space of API_SEMI_SPACE_MB
 * unless that is 0 (Node's own size) or the command line already names one (the operator's wins).
 */
export function copyNodeFlags(primaryFlags: readonly string[], semiSpaceMb: number): string[] {
  const named = primaryFlags.some((flag) => flag === SEMI_SPACE_FLAG || flag.startsWith(`${SEMI_SPACE_FLAG}=`));
  if (semiSpaceMb === 0 || named) return [...primaryFlags];
  return [...primaryFlags, `${SEMI_SPACE_FLAG}=${semiSpaceMb}`];
}
