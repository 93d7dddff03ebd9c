import assert from 'node:assert/strict';
import { formatTraceparent, newSpanId, parseTraceparent } from '../../workflows/trace-context';

describe('trace context in workflow headers', () => {
  const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
  const SPAN = '00f067aa0ba902b7';

  it('reads a version-00 traceparent, sampled or not, and writes it back the same', () => {
    for (const flags of ['01', '00']) {
      const value = `00-${TRACE}-${SPAN}-${flags}`;
      const context = parseTraceparent(value);
      assert.deepEqual(context, { traceId: TRACE, spanId: SPAN, sampled: flags === '01' });
      assert.equal(formatTraceparent(context!), value);
    }
    assert.equal(parseTraceparent(`00-${TRACE}-${SPAN}-03`)?.sampled, true, 'other flags beside sampled');
  });

  it('takes nothing that is not a valid traceparent', () => {
    for (const bad of [
      undefined,
      42,
      '',
      `01-${TRACE}-${SPAN}-01`,
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${'0'.repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${'0'.repeat(16)}-01`,
      `00-${TRACE}-${SPAN}`,
      `00-${TRACE}-${SPAN}-01-extra`,
    ])
      assert.equal(parseTraceparent(bad), undefined, String(bad));
  });

  it('makes 16-hex-digit span ids from the random source it is given, never all zeros', () => {
    let seed = 1;
    const seeded = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const first = newSpanId(seeded);
    seed = 1;
    assert.equal(newSpanId(seeded), first, 'the same source gives the same id (a replay)');
    assert.match(first, /^[0-9a-f]{16}$/);
    assert.equal(
      newSpanId(() => 0),
      '0000000000000001',
    );
  });
});
