// The failures of a database that does not answer in time are classified as database_unavailable
// (503 with Retry-After at the API, a retried attempt in the worker), however the driver words
// them: a silent connection dropped (prisma/bounded-client.ts), the pool's wait for a connection,
// Prisma's transaction that could not start or expired while its statements waited; and only
// those of Prisma's transaction errors.
import assert from 'node:assert/strict';
import { classifyFailure } from '../../core/failures';
import { DatabaseNotAnswering } from '../../prisma/bounded-client';
import { DatabaseConnectionLost } from '../../prisma/held-connection';

describe('classifyFailure of a database that does not answer in time', () => {
  const wrapped = (cause: Error) => Object.assign(new Error('Invalid `db.thing.findMany()` invocation'), { cause });
  const cases: Array<[string, unknown]> = [
    ['a silent connection dropped', new DatabaseNotAnswering(6_000)],
    ['the same, held across statements', new DatabaseConnectionLost(new DatabaseNotAnswering(6_000))],
    ['the same, under Prisma', wrapped(new DatabaseNotAnswering(6_000))],
    ['no pooled connection in time', new Error('timeout exceeded when trying to connect')],
    [
      'a Prisma transaction that could not start',
      Object.assign(new Error('Transaction API error: Unable to start a transaction in the given time.'), {
        code: 'P2028',
      }),
    ],
    [
      'a Prisma transaction that expired',
      Object.assign(
        new Error(
          'Transaction API error: A query cannot be executed on an expired transaction. The timeout for this transaction was 20000 ms',
        ),
        { code: 'P2028' },
      ),
    ],
  ];
  for (const [what, err] of cases) {
    it(`reads ${what} as database_unavailable`, () => {
      assert.equal(classifyFailure(err), 'database_unavailable');
    });
  }

  it('reads only those of Prisma transaction errors, and no other time-out', () => {
    assert.equal(classifyFailure(cases[3][1]), 'database_unavailable');
    const notFound = Object.assign(new Error('Transaction API error: Transaction not found.'), { code: 'P2028' });
    assert.equal(classifyFailure(notFound), undefined);
    assert.equal(classifyFailure(new Error('The webhook attempt timed out')), undefined);
  });
});
