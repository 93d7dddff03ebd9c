import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cardNumbersIn, holdsCardNumber, luhnValid, redactCardNumbers } from '../../../core/rules/card-numbers';

/** The digit that makes `body` pass Luhn when appended. */
function withCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(body + d)) return body + d;
  throw new Error('unreachable');
}

describe('card numbers (core/rules/card-numbers.ts)', () => {
  it('checks Luhn as the card networks do', () => {
    for (const pan of [
      '4111111111111111',
      '5555555555554444',
      '378282246310005',
      '6011111111111117',
      '4000056655665556',
    ])
      assert.equal(luhnValid(pan), true, pan);
    for (const other of ['4111111111111112', '1234567890123', '', '41111x1111111111'])
      assert.equal(luhnValid(other), false, other);
  });

  it('finds a card number alone, grouped by spaces or dashes, or among other words', () => {
    for (const text of [
      '4111111111111111',
      '4111 1111 1111 1111',
      '4111-1111-1111-1111',
      'card 3782 822463 10005 at the till',
      'ref:4111111111111111;',
      'order 12345 4111 1111 1111 1111',
      '4111111111111111 and 5555555555554444',
    ])
      assert.equal(holdsCardNumber(text), true, text);
    assert.deepEqual(cardNumbersIn('order 12345 4111 1111 1111 1111'), [{ start: 12, end: 31 }]);
    assert.equal(cardNumbersIn('4111111111111111 and 5555555555554444').length, 2);
  });

  it('lets through what is not one: Luhn failures, short or long runs, two separators, UUIDs, dates, zeros', () => {
    for (const text of [
      '0000000000000000',
      'AA-0000000-0000000-0000000',
      '4111111111111112',
      '411111111111',
      '41111111111111111111111110',
      '4111  1111 1111 1111',
      '4111 -1111-1111-1111',
      '12345678-9012-3456-7890-123456789012',
      'chg_01234567-8901-2345-6789-012345678903',
      '2026-12-03T10:00:00.000Z',
      '+1 415-555-0100',
      'SQ *BLUE BOTTLE 123',
    ])
      assert.equal(holdsCardNumber(text), false, text);
  });

  it('finds every Luhn-valid run of 13 to 19 digits, however it is grouped', () => {
    const groupings = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(
        fc.integer({ min: 12, max: 18 }),
        fc.stringMatching(/^[0-9]{18}$/),
        groupings,
        fc.constantFrom(' ', '-'),
        (length, digits, sizes, separator) => {
          const pan = withCheckDigit(digits.slice(0, length));
          const groups: string[] = [];
          for (let at = 0, i = 0; at < pan.length; i++) {
            const size = sizes[i % sizes.length];
            groups.push(pan.slice(at, at + size));
            at += size;
          }
          const text = `note: ${groups.join(separator)}.`;
          assert.equal(holdsCardNumber(text), true, text);
          assert.equal(redactCardNumbers(text), 'note: [card number].');
        },
      ),
    );
  });

  it('redacts each number and leaves the rest of the text as it was', () => {
    assert.equal(redactCardNumbers('/api/v2/chg/4111111111111111/x'), '/api/v2/chg/[card number]/x');
    assert.equal(redactCardNumbers('a 4111-1111-1111-1111 b 378282246310005'), 'a [card number] b [card number]');
    assert.equal(redactCardNumbers('/api/v2/chg/chg_1'), '/api/v2/chg/chg_1');
  });
});
