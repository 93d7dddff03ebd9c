// How many of a set of time intervals are open at once: the purchases in flight, or the workflows
// running, at their busiest moment. Pure, unit-tested in test/bench/intervals.test.ts.

/** The most intervals [start, end) open at one instant. An end at the same instant as a start closes first. */
export function maxOverlap(intervals: ReadonlyArray<readonly [number, number]>): number {
  const edges: Array<[number, number]> = [];
  for (const [start, end] of intervals) {
    if (!(end >= start)) throw new RangeError(`an interval ends before it starts: [${start}, ${end})`);
    edges.push([start, 1], [end, -1]);
  }
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) most = Math.max(most, (open += step));
  return most;
}
