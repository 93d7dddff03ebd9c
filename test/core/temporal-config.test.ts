// Temporal's standard settings (TEMPORAL_* variables and TOML profiles, read by
// @temporalio/envconfig) and the refusals at start: a certificate without its key, files that
// cannot be read or hold no PEM, TLS settings with TLS off, an API key in clear text in production.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../core/config';

// Not real keys: the checks at start look for the PEM armour; the handshake is
// test/core/temporal-connection.test.ts's.
const CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';

function problemsOf(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('core/temporal-config (Temporal settings in core/config)', () => {
  let dir: string;
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rewards-temporal-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads address, namespace and API key from the standard variables', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'k',
    });
    assert.equal(config.temporalAddress, 'ns.acct.tmprl.cloud:7233');
    assert.equal(config.temporalNamespace, 'ns.acct');
    assert.equal(config.temporalApiKey, 'k');
    assert.equal(config.temporalTls, true);
  });

  it('turns TLS on with any TLS setting, and off with TEMPORAL_TLS=false', () => {
    assert.equal(loadConfig({ TEMPORAL_TLS: 'true' }).temporalTls, true);
    assert.equal(loadConfig({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem', CERT) }).temporalTls, true);
    assert.equal(loadConfig({ TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }).temporalTls, true);
    assert.equal(loadConfig({ TEMPORAL_TLS: 'false' }).temporalTls, false);
  });

  it('accepts a complete mTLS setting', () => {
    const env = {
      TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem', CERT),
      TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key', KEY),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem', CERT),
    };
    assert.deepEqual(problemsOf(env), []);
    assert.deepEqual(problemsOf({ TEMPORAL_TLS_CLIENT_CERT_DATA: CERT, TEMPORAL_TLS_CLIENT_KEY_DATA: KEY }), []);
  });

  const refusals: Array<[string, () => NodeJS.ProcessEnv, RegExp]> = [
    [
      'a client certificate without its key',
      () => ({ TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem', CERT) }),
      /TEMPORAL_TLS_CLIENT_CERT_PATH .* and TEMPORAL_TLS_CLIENT_KEY_PATH .* go together/,
    ],
    ['a key without its certificate', () => ({ TEMPORAL_TLS_CLIENT_KEY_DATA: KEY }), /go together/],
    [
      'a certificate file that does not exist',
      () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'missing.pem') }),
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH names a file that cannot be read/,
    ],
    [
      'a certificate file that holds no certificate',
      () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('not-a-cert.pem', KEY) }),
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH must hold a PEM certificate/,
    ],
    [
      'a key that is no key',
      () => ({
        TEMPORAL_TLS_CLIENT_CERT_PATH: file('c.pem', CERT),
        TEMPORAL_TLS_CLIENT_KEY_PATH: file('k.pem', 'secret'),
      }),
      /TEMPORAL_TLS_CLIENT_KEY_PATH must hold a PEM private key/,
    ],
    [
      'both the path and the data of one setting',
      () => ({ TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem', CERT), TEMPORAL_TLS_SERVER_CA_CERT_DATA: CERT }),
      /Cannot specify both server_ca_cert_path and server_ca_cert_data/,
    ],
    [
      'TLS settings with TEMPORAL_TLS=false',
      () => ({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }),
      /TEMPORAL_TLS is false .* TEMPORAL_TLS_SERVER_NAME is set/,
    ],
    [
      'turning host verification off',
      () => ({ TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' }),
      /TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported/,
    ],
    [
      'an API key without TLS in production',
      () => ({ NODE_ENV: 'production', TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }),
      /TEMPORAL_API_KEY must not be sent without TLS when NODE_ENV=production/,
    ],
    [
      'a config file that does not exist',
      () => ({ TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') }),
      /TEMPORAL_CONFIG_FILE names a file that cannot be read/,
    ],
    ['SEED_SANDBOX that is not a boolean', () => ({ SEED_SANDBOX: 'yes' }), /SEED_SANDBOX must be true or false/],
  ];
  for (const [what, env, message] of refusals) {
    it(`refuses ${what}, naming the setting`, () => {
      const problems = problemsOf(env());
      assert.equal(problems.length, 1, problems.join('\n'));
      assert.match(problems[0], message);
    });
  }

  it('lists every Temporal problem with the others', () => {
    const problems = problemsOf({
      PORT: 'x',
      TEMPORAL_TLS: 'maybe',
      TEMPORAL_TLS_CLIENT_CERT_DATA: 'x',
      TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: '1',
    });
    assert.equal(problems.length, 5, problems.join('\n')); // PORT, TEMPORAL_TLS, pair, PEM, host verification
  });

  describe('TOML profiles (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE)', () => {
    const toml = () =>
      file(
        'temporal.toml',
        [
          '[profile.default]',
          'address = "localhost:7233"',
          '',
          '[profile.prod]',
          'address = "prod.acct.tmprl.cloud:7233"',
          'namespace = "prod.acct"',
          '',
          '[profile.prod.tls]',
          `client_cert_path = "${file('prod.pem', CERT)}"`,
          `client_key_path = "${file('prod.key', KEY)}"`,
          '',
        ].join('\n'),
      );

    it('reads the profile TEMPORAL_PROFILE names, with variables over it', () => {
      const config = loadConfig({ TEMPORAL_CONFIG_FILE: toml(), TEMPORAL_PROFILE: 'prod' });
      assert.equal(config.temporalAddress, 'prod.acct.tmprl.cloud:7233');
      assert.equal(config.temporalNamespace, 'prod.acct');
      assert.equal(config.temporalTls, true);
      assert.ok(config.temporal.profile.tls?.clientCert);
      const overridden = loadConfig({
        TEMPORAL_CONFIG_FILE: toml(),
        TEMPORAL_PROFILE: 'prod',
        TEMPORAL_NAMESPACE: 'other.acct',
      });
      assert.equal(overridden.temporalNamespace, 'other.acct');
    });

    it('reads the default profile of TEMPORAL_CONFIG_FILE', () => {
      assert.equal(loadConfig({ TEMPORAL_CONFIG_FILE: toml() }).temporalAddress, 'localhost:7233');
    });

    it('refuses a profile that is not in the file, and keys the SDK does not know', () => {
      assert.match(
        problemsOf({ TEMPORAL_CONFIG_FILE: toml(), TEMPORAL_PROFILE: 'staging' })[0],
        /Profile 'staging' not found/,
      );
      const strict = file(
        'strict.toml',
        '[profile.default]\naddress = "x:7233"\n[profile.default.tls]\ndisable_host_verification = true\n',
      );
      assert.match(problemsOf({ TEMPORAL_CONFIG_FILE: strict })[0], /unrecognized .*disable_host_verification/);
    });

    it("ignores the user's CLI profile (~/.config/temporalio/temporal.toml) unless a profile is asked for", () => {
      const home = join(dir, 'home');
      mkdirSync(join(home, '.config', 'temporalio'), { recursive: true });
      writeFileSync(
        join(home, '.config', 'temporalio', 'temporal.toml'),
        '[profile.default]\naddress = "someone-elses.tmprl.cloud:7233"\napi_key = "k"\n',
      );
      assert.equal(loadConfig({ HOME: home }).temporalAddress, undefined);
      assert.equal(
        loadConfig({ HOME: home, TEMPORAL_PROFILE: 'default' }).temporalAddress,
        'someone-elses.tmprl.cloud:7233',
      );
    });
  });
});
