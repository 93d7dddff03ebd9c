// How to reach Temporal, read the way Temporal's own CLI and SDKs read it (@temporalio/envconfig):
// TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS and the TEMPORAL_TLS_*
// certificate settings, over a TOML profile when one is asked for. Part of core/config.ts's one
// read of the environment; checked here so that a missing certificate or a certificate without
// its key stops the process at start, naming the setting, instead of failing the first connection.
import { readFileSync } from 'node:fs';
import { loadClientConfigProfile, type ClientConfigProfile, type ConfigDataSource } from '@temporalio/envconfig';

export interface TemporalSettings {
  /** Address, namespace, API key, TLS sources and gRPC metadata; files are read at connect time. */
  profile: ClientConfigProfile;
  /** Whether the connection uses TLS: any TLS setting or an API key turns it on, TEMPORAL_TLS=false off. */
  tls: boolean;
}

/**
 * The settings @temporalio/envconfig reads that this service supports (docs/operating/configuration.md,
 * .env.example; test/core/settings-documented.test.ts checks the SDK reads no others unseen).
 * Besides them, TEMPORAL_GRPC_META_<NAME> adds a gRPC header to every call.
 */
export const TEMPORAL_SETTINGS = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION',
  'TEMPORAL_CONFIG_FILE',
  'TEMPORAL_PROFILE',
] as const;

/** The TLS sources of a profile, each set by a file (`path`) or inline PEM (`data`). */
const TLS_SOURCES = [
  {
    field: 'clientCert',
    path: 'TEMPORAL_TLS_CLIENT_CERT_PATH',
    data: 'TEMPORAL_TLS_CLIENT_CERT_DATA',
    toml: 'client_cert',
    pem: 'CERTIFICATE',
  },
  {
    field: 'clientKey',
    path: 'TEMPORAL_TLS_CLIENT_KEY_PATH',
    data: 'TEMPORAL_TLS_CLIENT_KEY_DATA',
    toml: 'client_key',
    pem: 'PRIVATE KEY',
  },
  {
    field: 'serverCACert',
    path: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
    data: 'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
    toml: 'server_ca_cert',
    pem: 'CERTIFICATE',
  },
] as const;

type Env = NodeJS.ProcessEnv;

export function readTemporalSettings(env: Env, problems: string[]): TemporalSettings {
  const profile = loadProfile(env, problems);
  const tls = profile.tls ? profile.tls.disabled !== true : profile.apiKey !== undefined;
  const given = (field: 'clientCert' | 'clientKey'): boolean => profile.tls?.[field] !== undefined;
  if (given('clientCert') !== given('clientKey')) {
    problems.push(
      'TEMPORAL_TLS_CLIENT_CERT_PATH (or _DATA) and TEMPORAL_TLS_CLIENT_KEY_PATH (or _DATA) go together: mTLS needs the client certificate and its private key',
    );
  }
  for (const source of TLS_SOURCES) {
    const data = profile.tls?.[source.field];
    if (data) checkPem(data, source, env, problems);
  }
  const material = TLS_SOURCES.filter((s) => profile.tls?.[s.field] !== undefined).map((s) =>
    s.path.replace(/_PATH$/, '_*'),
  );
  if (profile.tls?.serverName !== undefined) material.push('TEMPORAL_TLS_SERVER_NAME');
  if (!tls && material.length > 0) {
    problems.push(
      `TEMPORAL_TLS is false (or the profile disables TLS), but ${material.join(', ')} ${material.length > 1 ? 'are' : 'is'} set: they only apply over TLS`,
    );
  }
  // The TypeScript SDK cannot turn host verification off; accepting the setting would pretend it had.
  if (env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === 'true' || env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION === '1') {
    problems.push(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported: set TEMPORAL_TLS_SERVER_NAME to the name the server certificate carries',
    );
  }
  if (env.NODE_ENV === 'production' && profile.apiKey !== undefined && !tls) {
    problems.push(
      'TEMPORAL_API_KEY must not be sent without TLS when NODE_ENV=production (TEMPORAL_TLS=false would send it in clear text)',
    );
  }
  return { profile, tls };
}

/**
 * The profile from the environment, over the TOML file's profile only when TEMPORAL_CONFIG_FILE or
 * TEMPORAL_PROFILE asks for one. (Temporal's tools also read ~/.config/temporalio/temporal.toml
 * unasked; a service must not pick up a developer's CLI profile, so here it is opt-in.)
 */
function loadProfile(env: Env, problems: string[]): ClientConfigProfile {
  const file = nonEmpty(env.TEMPORAL_CONFIG_FILE);
  const profileName = nonEmpty(env.TEMPORAL_PROFILE);
  // envconfig treats a missing file as "no profiles"; a file that was named must exist.
  if (file !== undefined && !readable(file))
    problems.push(`TEMPORAL_CONFIG_FILE names a file that cannot be read: ${file}`);
  try {
    return loadClientConfigProfile({
      disableFile: file === undefined && profileName === undefined,
      // Unknown keys (a typo, or disable_host_verification, which this SDK cannot honour) are errors.
      configFileStrict: true,
      overrideEnvVars: definedSettings(env),
    });
  } catch (err) {
    problems.push(`Temporal client profile${profileName ? ` "${profileName}"` : ''}: ${(err as Error).message}`);
    return {};
  }
}

/** A file or inline value in PEM form, holding what it should: refused at start, not at connect. */
function checkPem(source: ConfigDataSource, spec: (typeof TLS_SOURCES)[number], env: Env, problems: string[]): void {
  const name = settingName(spec, 'path' in source ? 'path' : 'data', env);
  let text: string;
  try {
    text = 'path' in source ? readFileSync(source.path, 'utf8') : Buffer.from(source.data).toString('utf8');
  } catch (err) {
    problems.push(`${name} names a file that cannot be read: ${(err as Error).message}`);
    return;
  }
  if (!new RegExp(`-----BEGIN [A-Z ]*${spec.pem}-----`).test(text)) {
    problems.push(
      `${name} must hold a PEM ${spec.pem === 'PRIVATE KEY' ? 'private key' : 'certificate'} ("-----BEGIN ...${spec.pem}-----")`,
    );
  }
}

/** The variable that set it, else the TOML key. */
function settingName(spec: (typeof TLS_SOURCES)[number], kind: 'path' | 'data', env: Env): string {
  const variable = spec[kind];
  return nonEmpty(env[variable]) !== undefined ? variable : `the profile's tls.${spec.toml}_${kind}`;
}

/** Unset and empty variables are alike here, as everywhere in core/config.ts (gRPC metadata excepted: empty removes a header). */
function definedSettings(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (value === '' && !key.startsWith('TEMPORAL_GRPC_META_')) continue;
    // envconfig reads any other value as false; core/config.ts reports it, so nothing follows from it here.
    if (key === 'TEMPORAL_TLS' && !['true', 'false', '1', '0'].includes(value)) continue;
    out[key] = value;
  }
  return out;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === '' ? undefined : value;
}

function readable(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}
