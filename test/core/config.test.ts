import assert from 'node:assert/strict';
import { devStackEnv, loadConfig, requireConnections, ConfigError } from '../../core/config';

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
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', OPERATOR_TOKEN: 'short', LOG_LEVEL: 'loud', TEMPORAL_TLS: 'maybe' });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 5);
      for (const name of ['PORT', 'DATABASE_URL', 'OPERATOR_TOKEN', 'LOG_LEVEL', 'TEMPORAL_TLS']) {
        assert.ok(err.message.includes(name), name);
      }
    }
  });

  it('turns TLS on with an API key (Temporal Cloud) unless told otherwise', () => {
    assert.equal(loadConfig({ TEMPORAL_API_KEY: 'k' }).temporalTls, true);
    assert.equal(loadConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).temporalTls, false);
  });

  it('requires the connections where a process cannot run without them', () => {
    assert.throws(() => requireConnections(loadConfig({})), /DATABASE_URL[\s\S]*TEMPORAL_ADDRESS/);
    assert.doesNotThrow(() => requireConnections(loadConfig({ DATABASE_URL: 'postgresql://h/db', TEMPORAL_ADDRESS: 'h:7233' })));
  });

  it('refuses private webhook destinations unless told, and never allows them with NODE_ENV=production', () => {
    assert.equal(loadConfig({}).webhookAllowPrivateDestinations, false);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' }).webhookAllowPrivateDestinations, true);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'false', NODE_ENV: 'production' }).webhookAllowPrivateDestinations, false);
    assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'yes' }), /WEBHOOK_ALLOW_PRIVATE_DESTINATIONS must be true or false/);
    assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: '1', NODE_ENV: 'production' }), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /WEBHOOK_ALLOW_PRIVATE_DESTINATIONS must not be true when NODE_ENV=production/);
      return true;
    });
  });

  it('lets the embedded dev stack reach local webhook receivers unless the variable says otherwise', () => {
    assert.equal(loadConfig(devStackEnv({})).webhookAllowPrivateDestinations, true);
    assert.equal(loadConfig(devStackEnv({ WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'false' })).webhookAllowPrivateDestinations, false);
    assert.throws(() => loadConfig(devStackEnv({ NODE_ENV: 'production' })), ConfigError);
  });
});
