// The loop of the scheduled jobs that work through a backlog in bounded batches (grant expiry,
// webhook retention): one activity per batch, again while batches come back full, at most
// `maxBatches` a run; what is left waits for the next run.

/**
 * Runs `batch` until one is not full or did nothing, at most `maxBatches` times; `add` counts
 * each into the caller's totals and says how many items it did. Returns the batches run. A full
 * batch that did nothing (every item failed, or was busy elsewhere) would find the same items
 * again, so it ends the loop too.
 */
export async function runBatches<B extends { more: boolean }>(
  maxBatches: number,
  batch: () => Promise<B>,
  add: (batch: B) => number,
): Promise<number> {
  let batches = 0;
  while (batches < maxBatches) {
    const done = await batch();
    batches += 1;
    if (add(done) === 0 || !done.more) break;
  }
  return batches;
}
