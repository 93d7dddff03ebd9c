import assert from 'node:assert/strict';
import { copyNodeFlags } from '../../api/copy-node-flags';

describe('api/copy-node-flags', () => {
  it('forks the copies with the primary’s flags and the configured semi-space', () => {
    assert.deepEqual(copyNodeFlags(['--enable-source-maps'], 64), ['--enable-source-maps', '--max-semi-space-size=64']);
  });

  it('leaves the semi-space to Node at 0', () => {
    assert.deepEqual(copyNodeFlags(['--enable-source-maps'], 0), ['--enable-source-maps']);
  });

  it('keeps a semi-space the command line names, in either spelling', () => {
    assert.deepEqual(copyNodeFlags(['--max-semi-space-size=32'], 64), ['--max-semi-space-size=32']);
    assert.deepEqual(copyNodeFlags(['--max-semi-space-size', '8'], 64), ['--max-semi-space-size', '8']);
  });

  it('does not take a longer flag of the same prefix for it', () => {
    assert.deepEqual(copyNodeFlags(['--max-semi-space-sizes'], 64), [
      '--max-semi-space-sizes',
      '--max-semi-space-size=64',
    ]);
  });
});
