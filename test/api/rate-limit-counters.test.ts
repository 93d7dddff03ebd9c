// The rate-limit counters shared by the API processes of a host (api/middleware/rate-limit-counters.ts),
// with the primary's side running in this process: the same messages as over a cluster's IPC
// channel, carried by a link that delivers them asynchronously, as IPC does.
import assert from 'node:assert/strict';
import { answer, BatchingClusterCounters, WindowCounters, type Link } from '../../api/middleware/rate-limit-counters';

/** A worker's channel to a primary holding `counters`; records every message sent. */
function linkTo(counters: WindowCounters, options: { silent?: boolean } = {}) {
  const sent: unknown[] = [];
  const listeners: Array<(m: unknown) => void> = [];
  const link: Link = {
    send(message) {
      sent.push(structuredClone(message));
      if (options.silent) return;
      void answer(counters, structuredClone(message)).then((reply) =>
        setImmediate(() => {
          listeners.forEach((l) => l({ channel: 'someone-else', id: reply?.id, counts: [] }));
          listeners.forEach((l) => l(structuredClone(reply)));
        }),
      );
    },
    onMessage: (listener) => listeners.push(listener),
  };
  return { link, sent };
}

describe('rate-limit counters shared over IPC', () => {
  it('sends the checks of one event-loop turn in one message and answers each in order', async () => {
    const primary = new WindowCounters(60);
    const { link, sent } = linkTo(primary);
    const requests = new BatchingClusterCounters(link, 1000).counter('requests');
    const counts = await Promise.all([
      requests.consume('tok_a', 1),
      requests.consume('tok_b', 1),
      requests.consume('tok_a', 1),
      requests.consume('tok_a', 5),
    ]);
    assert.deepEqual(
      counts.map((c) => c.consumedPoints),
      [1, 1, 2, 7],
    );
    assert.ok(counts.every((c) => c.msBeforeNext > 0 && c.msBeforeNext <= 60_000));
    assert.equal(sent.length, 1, 'one message for the four checks');
    assert.equal((await requests.consume('tok_a', 1)).consumedPoints, 8, 'a later turn continues the count');
    assert.equal(sent.length, 2);
  });

  it('counts exactly as one counter would across processes and prefixes', async () => {
    const primary = new WindowCounters(60);
    const processes = [linkTo(primary), linkTo(primary)].map(({ link }) => new BatchingClusterCounters(link, 1000));
    const seen: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        processes[i % 2]
          .counter('requests')
          .consume('tok_shared', 1)
          .then((c) => seen.push(c.consumedPoints)),
      ),
    );
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, i) => i + 1),
      'every count from 1 to 40 once',
    );
    const events = await processes[0].counter('events').consume('tok_shared', 100);
    assert.equal(events.consumedPoints, 100, 'another prefix counts on its own');
  });

  it('fails the checks of a message the primary does not answer in time', async () => {
    const { link } = linkTo(new WindowCounters(60), { silent: true });
    const requests = new BatchingClusterCounters(link, 50).counter('requests');
    await assert.rejects(
      Promise.all([requests.consume('tok_a', 1), requests.consume('tok_b', 1)]),
      /no reply from the primary within 50 ms/,
    );
  });
});
