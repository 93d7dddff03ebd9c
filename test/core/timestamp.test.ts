import assert from 'node:assert/strict';
import { parseTimestamp, toInstant } from '../../core/timestamp';

describe('parseTimestamp (the one parser of incoming timestamps)', () => {
  it('reads RFC 3339 date-times with Z or an offset, to the millisecond', () => {
    assert.equal(parseTimestamp('2026-11-23T10:00:00Z')?.toISOString(), '2026-11-23T10:00:00.000Z');
    assert.equal(parseTimestamp('2026-11-23t10:00:00z')?.toISOString(), '2026-11-23T10:00:00.000Z');
    assert.equal(parseTimestamp('2026-11-23T10:00:00.5+02:00')?.toISOString(), '2026-11-23T08:00:00.500Z');
    assert.equal(parseTimestamp('2026-11-23T10:00:00.123456789-05:30')?.toISOString(), '2026-11-23T15:30:00.123Z');
    assert.equal(parseTimestamp('2024-02-29T00:00:00Z')?.toISOString(), '2024-02-29T00:00:00.000Z');
    assert.equal(parseTimestamp('2000-02-29T00:00:00Z')?.toISOString(), '2000-02-29T00:00:00.000Z');
    assert.equal(
      parseTimestamp('0050-01-01T00:00:00Z')?.toISOString(),
      '0050-01-01T00:00:00.000Z',
      'no shift into the 1900s',
    );
  });

  it('refuses values with no instant: leap seconds, days a month lacks, out-of-range fields and offsets', () => {
    for (const text of [
      '2016-12-31T23:59:60Z', // a leap second
      '2026-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '2026-13-01T00:00:00Z',
      '2026-00-10T00:00:00Z',
      '2026-11-00T00:00:00Z',
      '2026-11-23T24:00:00Z',
      '2026-11-23T10:60:00Z',
      '2026-11-23T10:00:00+24:00',
      '2026-11-23T10:00:00+02:60',
      '0000-01-01T00:00:00Z',
    ]) {
      assert.equal(parseTimestamp(text), undefined, text);
    }
  });

  it('refuses other spellings: no offset, a space, dates alone, extra text', () => {
    for (const text of [
      '2026-11-23T10:00:00',
      '2026-11-23 10:00:00Z',
      '2026-11-23',
      '2026-11-23T10:00Z',
      ' 2026-11-23T10:00:00Z',
      '2026-11-23T10:00:00Zjunk',
      '+012026-11-23T10:00:00Z',
    ]) {
      assert.equal(parseTimestamp(text), undefined, text);
    }
  });

  it('toInstant fails loudly on what a schema should have refused', () => {
    assert.throws(() => toInstant('2016-12-31T23:59:60Z'), /not a valid timestamp/);
  });
});
