import assert from 'node:assert/strict';
import {
  DEFAULT_ENDPOINT_DISABLE_AFTER_MS,
  disableAfterMs,
  disableIfFailingSince,
  isDisableAfterOverride,
} from '../../../core/webhooks/endpoint-health';

const DAY = 86_400_000;

describe('endpoint health rules', () => {
  it("takes the issuer's override over the deployment's setting, never included", () => {
    assert.equal(disableAfterMs(null, DEFAULT_ENDPOINT_DISABLE_AFTER_MS), 5 * DAY);
    assert.equal(disableAfterMs(null, null), null, 'the deployment turned it off');
    assert.equal(disableAfterMs('2d', 5 * DAY), 2 * DAY);
    assert.equal(disableAfterMs('never', 5 * DAY), null);
    assert.equal(disableAfterMs('10d', null), 10 * DAY, 'an issuer may opt in where the deployment does not');
  });

  it('disables when the run of failures began at least the period before the failure', () => {
    const at = new Date('2026-11-25T12:00:00.000Z');
    assert.equal(disableIfFailingSince(at, 5 * DAY)?.toISOString(), '2026-11-20T12:00:00.000Z');
    assert.equal(disableIfFailingSince(at, null), null);
  });

  it('accepts never and durations of an hour to a year as an override, nothing else', () => {
    for (const ok of ['never', '1h', '5d', '365d', '90m']) assert.ok(isDisableAfterOverride(ok), ok);
    for (const bad of ['', '0s', '59m', '366d', '5', 'forever', 'Never', '1h30m'])
      assert.ok(!isDisableAfterOverride(bad), bad);
  });
});
