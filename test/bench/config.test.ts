// The bench's knobs (bench/config.ts): the services' log level comes from the service's own
// default unless BENCH_LOG_LEVEL says otherwise, and the tracing phase's knobs are checked.
import assert from 'node:assert/strict';
import { loadBenchConfig, serviceLogLevel } from '../../bench/config';
import { loadConfig } from '../../core/config';

describe('bench/config', () => {
  it("runs the services at the service's default log level, as npm start does", () => {
    assert.equal(serviceLogLevel({}), loadConfig({}).logLevel);
    assert.equal(serviceLogLevel({}), 'info');
    // The bench's own environment's LOG_LEVEL is not the services': BENCH_LOG_LEVEL is.
    assert.equal(serviceLogLevel({ LOG_LEVEL: 'warn' }), 'info');
  });

  it('takes BENCH_LOG_LEVEL as the override, and refuses a level pino does not know', () => {
    assert.equal(serviceLogLevel({ BENCH_LOG_LEVEL: 'warn' }), 'warn');
    assert.equal(serviceLogLevel({ BENCH_LOG_LEVEL: '' }), 'info');
    assert.throws(() => loadBenchConfig({ BENCH_LOG_LEVEL: 'loud' }), /BENCH_LOG_LEVEL: LOG_LEVEL must be one of/);
  });

  it('gives the tracing phase six rounds of 1,500 purchases, http/json and no calibration by default', () => {
    const config = loadBenchConfig({ BENCH_BACKLOG: '3000' });
    assert.equal(config.tracingBacklog, 1500);
    assert.equal(config.tracingRounds, 6);
    assert.equal(config.tracingProtocol, 'http/json');
    assert.equal(config.tracingCalibration, false);
    const set = loadBenchConfig({
      BENCH_TRACING_BACKLOG: '1000',
      BENCH_TRACING_ROUNDS: '2',
      BENCH_TRACING_PROTOCOL: 'http/protobuf',
      BENCH_TRACING_CALIBRATION: '1',
    });
    assert.equal(set.tracingCalibration, true);
    assert.equal(set.tracingBacklog, 1000);
    assert.equal(set.tracingRounds, 2);
    assert.equal(set.tracingProtocol, 'http/protobuf');
    assert.throws(
      () =>
        loadBenchConfig({
          BENCH_TRACING_BACKLOG: '50',
          BENCH_TRACING_PROTOCOL: 'grpc',
          BENCH_TRACING_CALIBRATION: 'yes',
        }),
      (err: Error) =>
        /BENCH_TRACING_BACKLOG must be an integer between 100 and 100000/.test(err.message) &&
        /BENCH_TRACING_CALIBRATION must be 1 or 0 \(got "yes"\)/.test(err.message) &&
        /BENCH_TRACING_PROTOCOL must be one of http\/json, http\/protobuf \(got "grpc"\)/.test(err.message),
    );
  });
});

describe('bench/config: budgets and statements', () => {
  it('bills a month of a million transfers and races 2,000 purchases for half a budget by default', () => {
    const config = loadBenchConfig({});
    assert.deepEqual(
      [config.statementTransfers, config.statementIssuers, config.statementMerchants],
      [1_000_000, 10, 100],
    );
    assert.deepEqual([config.budgetBacklog, config.budgetRounds, config.budgetRacePurchases], [2000, 2, 2000]);
    assert.throws(
      () => loadBenchConfig({ BENCH_STATEMENT_TRANSFERS: '10', BENCH_BUDGET_ROUNDS: '0' }),
      (err: Error) =>
        /BENCH_STATEMENT_TRANSFERS must be an integer between 1000 and 10000000/.test(err.message) &&
        /BENCH_BUDGET_ROUNDS must be an integer between 1 and 10/.test(err.message),
    );
  });
});

describe('bench/config: the Temporal dev server', () => {
  it('keeps its state in a SQLite file by default, in memory when asked, and refuses anything else', () => {
    assert.equal(loadBenchConfig({}).temporalStore, 'file');
    assert.equal(loadBenchConfig({ BENCH_TEMPORAL_STORE: 'memory' }).temporalStore, 'memory');
    assert.throws(
      () => loadBenchConfig({ BENCH_TEMPORAL_STORE: 'disk' }),
      /BENCH_TEMPORAL_STORE must be one of file, memory \(got "disk"\)/,
    );
  });
});
