// Readable log lines for a terminal (core/log-format.ts), and JSON everywhere else.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { formatLogLine, readableLogs } from '../../core/log-format';
import { createLogger } from '../../core/logger';

describe('core/log-format', () => {
  it('prints a record as time, level, name and message, then its fields', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-11-25T12:04:05.123Z',
      pid: 7,
      name: 'api',
      msg: 'listening',
      port: 3000,
      url: 'http://localhost:3000',
      issuer: { id: 'iss_1' },
    });
    assert.equal(
      formatLogLine(`${line}\n`),
      '12:04:05.123 INFO  api: listening port=3000 url=http://localhost:3000 issuer={"id":"iss_1"}\n',
    );
  });

  it("puts an error's stack under the line, and quotes strings with spaces", () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-11-25T12:04:05.123Z',
      msg: 'failed',
      reason: 'two words',
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
    });
    assert.equal(formatLogLine(line), '12:04:05.123 ERROR failed reason="two words"\n    Error: boom\n        at x\n');
  });

  it('passes a line that is not JSON through', () => {
    assert.equal(formatLogLine('plain text'), 'plain text\n');
  });

  it('is readable only at a terminal, and never in production', () => {
    assert.equal(readableLogs({ isTTY: true }, {}), true);
    assert.equal(readableLogs({ isTTY: true }, { NODE_ENV: 'production' }), false);
    assert.equal(readableLogs({ isTTY: false }, {}), false);
    assert.equal(readableLogs({}, {}), false);
  });

  it('makes createLogger write readable lines to a terminal', () => {
    const out = Object.assign(new PassThrough(), { isTTY: true, hasColors: () => false });
    const written: string[] = [];
    out.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    createLogger('info', 'api', out as unknown as NodeJS.WriteStream, {}).info({ port: 1 }, 'hello');
    assert.match(written.join(''), /^\d\d:\d\d:\d\d\.\d{3} INFO {2}api: hello port=1\n$/);
  });
});
