// The request's logger (api/middleware/request-id.ts) is a child logger made only when the
// request logs: at thousands of reads a second, one child per request was measurable. Every
// middleware on a quiet request's path must leave it unmade.
import assert from 'node:assert/strict';
import { startTestApp, newIssuer, type TestApp } from '../helpers/app';
import pino from 'pino';
import { createLogger, type Logger } from '../../core/logger';
import { groupBody } from '../helpers/groups';

describe('request logger', () => {
  let app: TestApp;
  let children = 0;

  before(async () => {
    const logger = createLogger('warn');
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<Logger['child']>) => {
      children++;
      return child(...args);
    }) as Logger['child'];
    app = await startTestApp({ logger });
  });
  after(() => app.close());

  it('is not made for a request that logs nothing, and is made for one that does', async () => {
    const issuer = await newIssuer(app);
    const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
    children = 0;
    for (let i = 0; i < 3; i++) {
      const res = await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`);
      assert.equal(res.status, 200);
    }
    assert.equal(children, 0, 'three quiet requests made no child logger');

    // A refused request logs its error id: its logger is made then.
    const missing = await issuer.call('GET', '/api/v2/chg/chg_00000000-0000-0000-0000-000000000000/rewards/summary');
    assert.equal(missing.status, 404);
    assert.ok(children >= 1);
  });

  it('writes the access line of a request at info without making its child logger', async () => {
    const lines: string[] = [];
    const logger: Logger = pino({ level: 'info' }, { write: (l: string) => lines.push(l) });
    let made = 0;
    const child = logger.child.bind(logger);
    logger.child = ((...args: Parameters<Logger['child']>) => {
      made++;
      return child(...args);
    }) as Logger['child'];
    const quiet = await startTestApp({ logger });
    try {
      const issuer = await newIssuer(quiet);
      const group = (await issuer.call('POST', '/api/v2/chg', groupBody())).body;
      made = 0;
      lines.length = 0;
      const res = await issuer.call('GET', `/api/v2/chg/${group.id}/rewards/summary`);
      assert.equal(res.status, 200);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(made, 0, 'no child logger for the access line');
      const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
      assert.equal(line?.route, '/api/v2/chg/:chgId/rewards/summary');
      assert.equal(line?.issuerId, issuer.id);
      assert.match(line?.requestId ?? '', /^req_/);
    } finally {
      await quiet.close();
    }
  });
});
