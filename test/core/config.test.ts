import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { databaseTimeouts, devStackEnv, loadConfig, requireConnections, ConfigError } from '../../core/config';
import { generateKeyRingEntry } from '../../core/crypto/key-ring';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS } from '../../workflows/webhook-delivery-contract';

/** Where operators read the settings and their defaults. */
const CONFIGURATION_DOC = join(__dirname, '..', '..', 'docs', 'operating', 'configuration.md');

describe('core/config', () => {
  it('has working defaults for an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.port, 3000);
    assert.equal(config.temporalTaskQueue, 'rewards');
    assert.equal(config.temporalTls, false);
    assert.equal(config.databaseUrl, undefined);
  });

  it('names every bad variable at once', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        OPERATOR_TOKEN: 'short',
        LOG_LEVEL: 'loud',
        TEMPORAL_TLS: 'maybe',
      });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 5);
      for (const name of ['PORT', 'DATABASE_URL', 'OPERATOR_TOKEN', 'LOG_LEVEL', 'TEMPORAL_TLS']) {
        assert.ok(err.message.includes(name), name);
      }
    }
  });

  it('keeps root (OPERATOR_TOKEN) on unless OPERATOR_ROOT=disabled, and refuses anything else', () => {
    assert.equal(loadConfig({}).operatorRootEnabled, true);
    assert.equal(loadConfig({ OPERATOR_ROOT: 'enabled' }).operatorRootEnabled, true);
    assert.equal(loadConfig({ OPERATOR_ROOT: 'disabled' }).operatorRootEnabled, false);
    assert.throws(() => loadConfig({ OPERATOR_ROOT: 'off' }), /OPERATOR_ROOT must be enabled or disabled/);
  });

  it('turns TLS on with an API key (Temporal Cloud) unless told otherwise', () => {
    assert.equal(loadConfig({ TEMPORAL_API_KEY: 'k' }).temporalTls, true);
    assert.equal(loadConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).temporalTls, false);
  });

  describe('workflow settings (new runs start with them)', () => {
    it('defaults to a 10-day settlement time-out and the contract’s retry schedule', () => {
      const config = loadConfig({});
      assert.equal(config.settlementTimeoutMs, 10 * 86_400_000);
      assert.deepEqual(
        config.webhookRetryScheduleMs,
        [30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000],
      );
      assert.deepEqual(config.webhookRetryScheduleMs, DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS);
    });

    it('reads durations with their unit', () => {
      assert.equal(loadConfig({ SETTLEMENT_TIMEOUT: '36h' }).settlementTimeoutMs, 36 * 3_600_000);
      assert.equal(loadConfig({ SETTLEMENT_TIMEOUT: '1m' }).settlementTimeoutMs, 60_000);
      assert.equal(loadConfig({ SETTLEMENT_TIMEOUT: '90d' }).settlementTimeoutMs, 90 * 86_400_000);
      assert.deepEqual(
        loadConfig({ WEBHOOK_RETRY_SCHEDULE: '10s, 5m,1h' }).webhookRetryScheduleMs,
        [10_000, 300_000, 3_600_000],
      );
      assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '7d' }).webhookRetryScheduleMs, [7 * 86_400_000]);
      assert.equal(
        loadConfig({ WEBHOOK_RETRY_SCHEDULE: Array(50).fill('1s').join(',') }).webhookRetryScheduleMs.length,
        50,
      );
    });

    const bad: Array<[string, string, RegExp]> = [
      [
        'SETTLEMENT_TIMEOUT',
        '10',
        /SETTLEMENT_TIMEOUT must be a whole number with a unit .* from 1m to 90d \(got "10"\)/,
      ],
      ['SETTLEMENT_TIMEOUT', '59s', /SETTLEMENT_TIMEOUT .* from 1m to 90d \(got "59s"\)/],
      ['SETTLEMENT_TIMEOUT', '91d', /SETTLEMENT_TIMEOUT .*\(got "91d"\)/],
      ['SETTLEMENT_TIMEOUT', '1h30m', /SETTLEMENT_TIMEOUT .*\(got "1h30m"\)/],
      [
        'WEBHOOK_RETRY_SCHEDULE',
        '30s,2x',
        /WEBHOOK_RETRY_SCHEDULE must be 1 to 50 comma-separated waits of 0s to 7d, each a whole number with a unit .*\(got "30s,2x"\)/,
      ],
      ['WEBHOOK_RETRY_SCHEDULE', '30s,,2m', /WEBHOOK_RETRY_SCHEDULE .*\(got "30s,,2m"\)/],
      ['WEBHOOK_RETRY_SCHEDULE', '1h,8d', /WEBHOOK_RETRY_SCHEDULE .* of 0s to 7d, .*\(got "1h,8d"\)/],
      ['WEBHOOK_RETRY_SCHEDULE', Array(51).fill('1s').join(','), /WEBHOOK_RETRY_SCHEDULE must be 1 to 50 /],
    ];
    for (const [name, value, message] of bad) {
      it(`refuses ${name}=${value.length > 20 ? `${value.slice(0, 20)}…` : value}, saying what it expects`, () => {
        assert.throws(
          () => loadConfig({ [name]: value }),
          (err) => err instanceof ConfigError && err.problems.length === 1 && message.test(err.problems[0]),
        );
      });
    }

    it('documents in docs/operating/configuration.md defaults that read back as the real ones', () => {
      const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
      const documented = (name: string) =>
        new RegExp(`^\\| \`${name}\` \\| \`([^\`]+)\` \\|`, 'm').exec(doc)?.[1] ??
        assert.fail(`${name} is not in docs/operating/configuration.md`);
      const env = {
        SETTLEMENT_TIMEOUT: documented('SETTLEMENT_TIMEOUT'),
        WEBHOOK_RETRY_SCHEDULE: documented('WEBHOOK_RETRY_SCHEDULE'),
      };
      const defaults = loadConfig({});
      const fromDoc = loadConfig(env);
      assert.deepEqual(
        [fromDoc.settlementTimeoutMs, fromDoc.webhookRetryScheduleMs],
        [defaults.settlementTimeoutMs, defaults.webhookRetryScheduleMs],
      );
    });

    it('reports both bad settings together with the rest', () => {
      assert.throws(
        () => loadConfig({ PORT: 'eighty', SETTLEMENT_TIMEOUT: 'soon', WEBHOOK_RETRY_SCHEDULE: 'often' }),
        (err) =>
          err instanceof ConfigError &&
          err.problems.length === 3 &&
          ['PORT', 'SETTLEMENT_TIMEOUT', 'WEBHOOK_RETRY_SCHEDULE'].every((n) => err.message.includes(n)),
      );
    });
  });

  describe('database bounds (prisma/bounded-client.ts)', () => {
    const NAMES = [
      'DATABASE_CONNECT_TIMEOUT_MS',
      'API_DATABASE_STATEMENT_TIMEOUT_MS',
      'WORKER_DATABASE_STATEMENT_TIMEOUT_MS',
      'DATABASE_TRANSACTION_TIMEOUT_MS',
    ];

    it('defaults to what docs/operating/configuration.md says, the API bound shorter than the worker one', () => {
      const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
      const documented = NAMES.map((name) => [
        name,
        new RegExp(`^\\| \`${name}\` \\| \`([^\`]+)\``, 'm').exec(doc)?.[1] ??
          assert.fail(`${name} is not in docs/operating/configuration.md`),
      ]);
      const defaults = loadConfig({});
      assert.deepEqual(loadConfig(Object.fromEntries(documented)), defaults);
      assert.deepEqual(databaseTimeouts(defaults, 'api'), {
        connectTimeoutMs: 5_000,
        statementTimeoutMs: 5_000,
        transactionTimeoutMs: 20_000,
      });
      assert.deepEqual(databaseTimeouts(defaults, 'worker'), {
        connectTimeoutMs: 5_000,
        statementTimeoutMs: 20_000,
        transactionTimeoutMs: 20_000,
      });
    });

    it('takes each process its own statement bound, and refuses what is out of range, naming each', () => {
      const config = loadConfig({
        DATABASE_CONNECT_TIMEOUT_MS: '2000',
        API_DATABASE_STATEMENT_TIMEOUT_MS: '3000',
        WORKER_DATABASE_STATEMENT_TIMEOUT_MS: '60000',
        DATABASE_TRANSACTION_TIMEOUT_MS: '30000',
      });
      assert.deepEqual(databaseTimeouts(config, 'api'), {
        connectTimeoutMs: 2_000,
        statementTimeoutMs: 3_000,
        transactionTimeoutMs: 30_000,
      });
      assert.equal(databaseTimeouts(config, 'worker').statementTimeoutMs, 60_000);
      assert.throws(
        () => loadConfig(Object.fromEntries(NAMES.map((name) => [name, name.startsWith('API') ? '5s' : '0']))),
        (err) => err instanceof ConfigError && NAMES.every((name, i) => err.problems[i]?.startsWith(name)),
      );
    });
  });

  describe('shutdown settings (docs/operating/runbook.md, "Shutdown and probes")', () => {
    it('defaults to a 5 s drain delay, 10 s for requests and 30 s for activities, as documented', () => {
      const config = loadConfig({});
      assert.deepEqual(
        [config.shutdownDrainDelayMs, config.apiShutdownGraceMs, config.workerShutdownGraceMs],
        [5_000, 10_000, 30_000],
      );
      const doc = readFileSync(CONFIGURATION_DOC, 'utf8');
      const names = ['SHUTDOWN_DRAIN_DELAY', 'API_SHUTDOWN_GRACE', 'WORKER_SHUTDOWN_GRACE'];
      const documented = names.map((name) => [
        name,
        new RegExp(`^\\| \`${name}\` \\| \`([^\`]+)\``, 'm').exec(doc)?.[1] ??
          assert.fail(`${name} is not in docs/operating/configuration.md`),
      ]);
      const fromDoc = loadConfig(Object.fromEntries(documented));
      assert.deepEqual(
        [fromDoc.shutdownDrainDelayMs, fromDoc.apiShutdownGraceMs, fromDoc.workerShutdownGraceMs],
        [5_000, 10_000, 30_000],
      );
    });

    it('reads them as durations and refuses what is out of range, naming each', () => {
      const config = loadConfig({ SHUTDOWN_DRAIN_DELAY: '0s', API_SHUTDOWN_GRACE: '2m', WORKER_SHUTDOWN_GRACE: '1h' });
      assert.deepEqual(
        [config.shutdownDrainDelayMs, config.apiShutdownGraceMs, config.workerShutdownGraceMs],
        [0, 120_000, 3_600_000],
      );
      assert.throws(
        () => loadConfig({ SHUTDOWN_DRAIN_DELAY: '5', API_SHUTDOWN_GRACE: '0s', WORKER_SHUTDOWN_GRACE: '2h' }),
        (err) =>
          err instanceof ConfigError &&
          err.problems.length === 3 &&
          /SHUTDOWN_DRAIN_DELAY .* from 0s to 5m/.test(err.problems[0]) &&
          /API_SHUTDOWN_GRACE .* from 1s to 10m/.test(err.problems[1]) &&
          /WORKER_SHUTDOWN_GRACE .* from 1s to 1h/.test(err.problems[2]),
      );
    });

    it('has npm start stop its API without waiting for a load balancer, unless told otherwise', () => {
      assert.equal(loadConfig(devStackEnv({})).shutdownDrainDelayMs, 0);
      assert.equal(loadConfig(devStackEnv({ SHUTDOWN_DRAIN_DELAY: '3s' })).shutdownDrainDelayMs, 3_000);
    });
  });

  describe('MIGRATION_LOCK_TIMEOUT (docs/operating/upgrading.md, "Migrations that cannot lock a busy table")', () => {
    it('defaults to 5 s, as documented, and reads a duration from 0s (no limit) to 10m', () => {
      assert.equal(loadConfig({}).migrationLockTimeoutMs, 5_000);
      const documented = /^\| `MIGRATION_LOCK_TIMEOUT` \| `([^`]+)`/m.exec(
        readFileSync(CONFIGURATION_DOC, 'utf8'),
      )?.[1];
      assert.equal(loadConfig({ MIGRATION_LOCK_TIMEOUT: documented }).migrationLockTimeoutMs, 5_000);
      assert.equal(loadConfig({ MIGRATION_LOCK_TIMEOUT: '0s' }).migrationLockTimeoutMs, 0);
      assert.equal(loadConfig({ MIGRATION_LOCK_TIMEOUT: '750ms' }).migrationLockTimeoutMs, 750);
      assert.throws(
        () => loadConfig({ MIGRATION_LOCK_TIMEOUT: '1h' }),
        (err) => err instanceof ConfigError && /MIGRATION_LOCK_TIMEOUT .* from 0s to 10m/.test(err.problems[0]),
      );
    });
  });

  it('requires the connections and the webhook secret keys where a process cannot run without them', () => {
    assert.throws(
      () => requireConnections(loadConfig({})),
      /DATABASE_URL[\s\S]*TEMPORAL_ADDRESS[\s\S]*WEBHOOK_SECRET_KEYS is required/,
    );
    const connections = { DATABASE_URL: 'postgresql://h/db', TEMPORAL_ADDRESS: 'h:7233' };
    assert.throws(
      () => requireConnections(loadConfig(connections)),
      (err) => err instanceof ConfigError && err.problems.length === 1 && /WEBHOOK_SECRET_KEYS/.test(err.message),
    );
    const config = requireConnections(loadConfig({ ...connections, WEBHOOK_SECRET_KEYS: generateKeyRingEntry('k1') }));
    assert.equal(config.webhookSecretKeys.primaryKeyId, 'k1');
  });

  it('reads WEBHOOK_SECRET_KEYS as a key ring and reports a bad one without quoting it', () => {
    assert.equal(loadConfig({}).webhookSecretKeys, undefined);
    const [k2, k1] = [generateKeyRingEntry('k2'), generateKeyRingEntry('k1')];
    assert.deepEqual(loadConfig({ WEBHOOK_SECRET_KEYS: `${k2},${k1}` }).webhookSecretKeys!.keyIds, ['k2', 'k1']);
    const bad = `${k1},${k1.slice(0, -4)}`;
    assert.throws(
      () => loadConfig({ WEBHOOK_SECRET_KEYS: bad, PORT: 'eighty' }),
      (err) =>
        err instanceof ConfigError &&
        err.problems.length === 2 &&
        /WEBHOOK_SECRET_KEYS entry 2 \(id "k1"\) must hold 32 random bytes/.test(err.message) &&
        !err.message.includes(k1.slice(3, 20)),
    );
  });

  it('refuses private webhook destinations unless told, and never allows them with NODE_ENV=production', () => {
    assert.equal(loadConfig({}).webhookAllowPrivateDestinations, false);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' }).webhookAllowPrivateDestinations, true);
    assert.equal(
      loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'false', NODE_ENV: 'production' })
        .webhookAllowPrivateDestinations,
      false,
    );
    assert.throws(
      () => loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'yes' }),
      /WEBHOOK_ALLOW_PRIVATE_DESTINATIONS must be true or false/,
    );
    assert.throws(
      () => loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: '1', NODE_ENV: 'production' }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /WEBHOOK_ALLOW_PRIVATE_DESTINATIONS must not be true when NODE_ENV=production/);
        return true;
      },
    );
  });

  it('lets the embedded dev stack reach local webhook receivers unless the variable says otherwise', () => {
    assert.equal(loadConfig(devStackEnv({})).webhookAllowPrivateDestinations, true);
    assert.equal(
      loadConfig(devStackEnv({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'false' })).webhookAllowPrivateDestinations,
      false,
    );
    assert.throws(() => loadConfig(devStackEnv({ NODE_ENV: 'production' })), ConfigError);
  });
});
