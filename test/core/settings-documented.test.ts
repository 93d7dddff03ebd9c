// Every setting the service reads is documented where operators look: .env.example and
// the table of docs/operating/configuration.md. The names are taken from the code that reads them (the string
// literals and `env.NAME` reads of the modules in ENVIRONMENT_READERS), so a new setting without its
// documentation fails here; no other module of the service reads the environment, so none can
// slip past; and the Temporal variables the SDK's envconfig reads are all ones we list, so an SDK
// upgrade that adds one is noticed.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEMPORAL_SETTINGS } from '../../core/temporal-config';

const ROOT = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/**
 * The modules that read the environment, as docs/operating/configuration.md says: the service's
 * settings, Temporal's, OpenTelemetry's, and the logger's NODE_ENV.
 */
const ENVIRONMENT_READERS = [
  'core/config.ts',
  'core/temporal-config.ts',
  'core/tracing.ts',
  'core/logger.ts',
  'core/log-format.ts',
];

/** The service's sources: what the API, the worker and the migration job run. */
const SERVICE_DIRS = ['api', 'core', 'worker', 'activities', 'workflows'];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Whether a source reads the environment: process.env, or env.NAME / env[...] of an env it was handed. */
export const readsEnvironment = (source: string): boolean =>
  /\bprocess\.env\b|\benv\.[A-Z][A-Z0-9_]*\b|\benv\[/.test(source);

/** Names read by the configuration modules: 'NAME' literals and env.NAME. */
function settingsRead(): Set<string> {
  const names = new Set<string>();
  for (const file of ENVIRONMENT_READERS) {
    const source = read(file);
    for (const m of source.matchAll(/'([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)'/g)) names.add(m[1]);
    for (const m of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(m[1]);
  }
  return names;
}

const CONFIGURATION_DOC = 'docs/operating/configuration.md';

/** Names in the first column of the table under "## Settings" in docs/operating/configuration.md. */
function documentedNames(): Set<string> {
  const doc = read(CONFIGURATION_DOC);
  const start = doc.indexOf('\n## Settings');
  assert.ok(start >= 0, `no "## Settings" in ${CONFIGURATION_DOC}`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  const names = new Set<string>();
  for (const line of section.split('\n')) {
    const first = /^\| ([^|]+) \|/.exec(line)?.[1] ?? '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(m[1]);
  }
  return names;
}

describe('settings are documented (.env.example, docs/operating/configuration.md)', () => {
  const names = [...settingsRead()].sort();

  it('finds the environment read only by the modules that the configuration page names', () => {
    assert.ok(readsEnvironment('const level = process.env.LOG_LEVEL;'));
    assert.ok(readsEnvironment('return env.NODE_ENV !== "production";'));
    assert.ok(!readsEnvironment('const config = loadConfig(); // reads the environment'));
    const service = [
      ...SERVICE_DIRS.flatMap(sources),
      ...readdirSync(join(ROOT, 'prisma'))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => `prisma/${file}`),
    ];
    assert.deepEqual(
      service.filter((file) => readsEnvironment(read(file)) && !ENVIRONMENT_READERS.includes(file)),
      [],
    );
    for (const reader of ENVIRONMENT_READERS) assert.ok(read(CONFIGURATION_DOC).includes(`\`${reader}\``), reader);
  });

  it('finds the settings the configuration reads', () => {
    for (const known of [
      'DATABASE_URL',
      'NODE_ENV',
      'TEMPORAL_TLS_CLIENT_CERT_PATH',
      'SEED_SANDBOX',
      'RATE_LIMIT_WINDOW_SECONDS',
    ]) {
      assert.ok(names.includes(known), known);
    }
    assert.ok(names.length >= 30, `only ${names.length} names found: the pattern broke`);
  });

  it('lists every one in .env.example, with its default or an empty value', () => {
    const example = read('.env.example');
    const missing = names.filter((name) => !new RegExp(`^(# )?${name}=`, 'm').test(example));
    assert.deepEqual(missing, []);
  });

  it('lists every one in the table of docs/operating/configuration.md', () => {
    const table = documentedNames();
    assert.deepEqual(
      names.filter((name) => !table.has(name)),
      [],
    );
  });

  it('knows every variable @temporalio/envconfig reads', () => {
    const lib = join(ROOT, 'node_modules', '@temporalio', 'envconfig', 'lib', 'envconfig-toml.js');
    const read = new Set([...readFileSync(lib, 'utf8').matchAll(/envProvider\['([A-Z_]+)'\]/g)].map((m) => m[1]));
    assert.ok(read.has('TEMPORAL_ADDRESS'), 'the SDK reads its variables as envProvider[...]');
    // Where the default TOML file lives, and the codec server of the CLI and UI (not used by clients).
    const notSettings = new Set([
      'HOME',
      'XDG_CONFIG_HOME',
      'APPDATA',
      'TEMPORAL_CODEC_ENDPOINT',
      'TEMPORAL_CODEC_AUTH',
    ]);
    const known = new Set<string>(TEMPORAL_SETTINGS);
    assert.deepEqual(
      [...read].filter((name) => !known.has(name) && !notSettings.has(name)),
      [],
    );
  });
});
