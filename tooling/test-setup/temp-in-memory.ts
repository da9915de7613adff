import { lstat, mkdtemp, readdir, rm, statfs } from "node:fs/promises";
import { join } from "node:path";

/**
 * Vitest global setup: the test files' temporary directories (`os.tmpdir()`: `tempDirectory`,
 * data directories, agent containers) in a directory of its own on a memory file system
 * (`/dev/shm`, where it is a writable tmpfs), removed when the run ends.
 *
 * Why: the tests create and delete hundreds of thousands of files. On ext4 without a journal
 * (this project's CI machine), creating a file after many deletions is slow: to place its inode the
 * kernel skips every recently deleted one, reading its inode table block each time
 * (`find_inode_bit` → `recently_deleted`). The artifacts package's tests spent 19-23 s of system
 * time on it against 6 s here, and took 24-27 s instead of 14-17 (2026-12-02). What a test checks
 * does not depend on the disk; what does (storage-fs: durability, renames, listings on a real
 * file system) opts out with `tempOnDisk`. A `TMPDIR` set by whoever runs the tests is kept, as
 * is the system's where there is no tmpfs (macOS, Windows).
 */

/** `statfs` type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
const MEMORY_FILE_SYSTEM = "/dev/shm";
/** `<PREFIX><pid>-<random>`: the pid says whether the run that made it is still there. */
const PREFIX = "stowage-test-";

/** One directory per Vitest process, whose projects (shared, isolated) each run this setup. */
const STATE = Symbol.for("stowage.test.tempInMemory");
interface State {
  dir: string;
  users: number;
}
const holder = globalThis as { [STATE]?: Promise<State | undefined> };

async function onTmpfs(path: string): Promise<boolean> {
  try {
    return (await statfs(path)).type === TMPFS_MAGIC;
  } catch {
    return false;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists and belongs to another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes from `base` the directories of runs that ended without their teardown (killed): memory
 * is not freed otherwise. Only this user's own directories named after a process that is gone;
 * anything else there (another user's run, a link, a file, a live run's directory) is left alone.
 */
export async function removeAbandoned(base: string): Promise<void> {
  const uid = process.getuid?.();
  for (const name of await readdir(base).catch(() => [] as string[])) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split("-")[0]);
    if (!Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    const path = join(base, name);
    const info = await lstat(path).catch(() => undefined);
    if (!info?.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
    await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

async function start(): Promise<State | undefined> {
  if (process.env.TMPDIR || !(await onTmpfs(MEMORY_FILE_SYSTEM))) return undefined;
  await removeAbandoned(MEMORY_FILE_SYSTEM);
  const dir = await mkdtemp(join(MEMORY_FILE_SYSTEM, `${PREFIX}${process.pid}-`));
  const state = { dir, users: 0 };
  // Before any worker starts: they, and every process a test starts with this environment, inherit it.
  process.env.TMPDIR = dir;
  return state;
}

export default async function setup(): Promise<() => Promise<void>> {
  holder[STATE] ??= start();
  const state = await holder[STATE];
  if (state) state.users++;
  return async () => {
    if (!state || --state.users > 0) return;
    delete process.env.TMPDIR;
    delete holder[STATE];
    await rm(state.dir, { recursive: true, force: true });
  };
}
