import { mkdir, readFile, realpath, rename, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { fromSystemError, StowageError } from "@stowage/core";
import lockfile from "proper-lockfile";

/** The lock directory inside the data directory (proper-lockfile's: created with an atomic mkdir). */
const LOCK_NAME = "stowage.lock";
/** Who holds the lock, written by the holder right after taking it. */
const HOLDER_NAME = "stowage.lock.json";
/** A lock not refreshed for this long belongs to a crashed holder (unless it runs on this host). */
const STALE_MS = 10_000;
/** How often the holder refreshes the lock's mtime. */
const REFRESH_MS = 1_000;
/**
 * A dead holder's lock is taken over once it is this old: more than one refresh, so that a lock
 * just taken by a new holder (whose name is not written yet) is never mistaken for the dead one's.
 */
const DEAD_HOLDER_GRACE_MS = 2 * REFRESH_MS;

/** Who holds a data directory: the `details` of a DATA_DIR_LOCKED error. No path, by design. */
export interface DataDirHolder {
  pid: number;
  hostname: string;
  /** When the holder took the lock (ISO 8601). */
  since: string;
}

/** A held data directory lock. */
export interface DataDirLock {
  /** Gives the lock up; safe to call twice. */
  release(): Promise<void>;
}

/** Real paths of the data directories this process holds (proper-lockfile would see its own lock as fresh). */
const heldHere = new Set<string>();

function lockedError(holder: DataDirHolder | undefined): StowageError {
  const who = holder
    ? `process ${holder.pid} on ${holder.hostname} since ${holder.since}`
    : "another process";
  return new StowageError(
    "UNAVAILABLE",
    `the data directory is in use by ${who}: stop that process (the server) or talk to it over HTTP`,
    { reason: "DATA_DIR_LOCKED", details: holder ? { ...holder } : {} },
  );
}

async function readHolder(dir: string): Promise<DataDirHolder | undefined> {
  try {
    const value = JSON.parse(await readFile(join(dir, HOLDER_NAME), "utf8")) as Partial<DataDirHolder>;
    if (
      typeof value.pid === "number" &&
      typeof value.hostname === "string" &&
      typeof value.since === "string"
    ) {
      return { pid: value.pid, hostname: value.hostname, since: value.since };
    }
  } catch {
    // Missing or torn: the holder is unknown, which only makes the error less specific.
  }
  return undefined;
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
 * Before asking proper-lockfile: a live holder on this host is never displaced, however late its
 * last refresh (a long synchronous query can delay it); a dead one's lock is removed at once
 * instead of after the stale time. Holders on other hosts (a shared volume) are judged by mtime.
 */
async function checkCurrentHolder(dir: string, lockDir: string): Promise<void> {
  const refreshedAt = await lockMtime(lockDir);
  if (refreshedAt === undefined) return; // nobody holds it
  const holder = await readHolder(dir);
  if (!holder || holder.hostname !== hostname()) return;
  // Our own pid in the file is a previous life of this process id (a restarted container).
  if (holder.pid !== process.pid && processAlive(holder.pid)) throw lockedError(holder);
  const wait = refreshedAt + DEAD_HOLDER_GRACE_MS - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  // Refreshed meanwhile: a new holder took it and has not written its name yet. Leave it.
  if ((await lockMtime(lockDir)) === refreshedAt) await rmdir(lockDir).catch(() => {});
}

async function lockMtime(lockDir: string): Promise<number | undefined> {
  try {
    return (await stat(lockDir)).mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * Takes the exclusive lock of a data directory (created if missing) for this process, with
 * proper-lockfile: an atomic mkdir of `stowage.lock` inside it, refreshed every second, and
 * `stowage.lock.json` naming the holder. Fails with UNAVAILABLE (reason `DATA_DIR_LOCKED`,
 * `details` = the holder's pid, hostname and since) while another process holds it. A crashed
 * holder's lock is taken over: at once on the same host (its pid is gone), after 10 s elsewhere.
 * `onCompromised` is called if the lock is lost while held (its directory removed by hand).
 */
export async function lockDataDir(dataDir: string, onCompromised: () => void): Promise<DataDirLock> {
  let dir: string;
  try {
    await mkdir(dataDir, { recursive: true });
    dir = await realpath(dataDir);
  } catch (err) {
    throw fromSystemError(err, "open the data directory");
  }
  const lockDir = join(dir, LOCK_NAME);
  if (heldHere.has(dir)) throw lockedError(await readHolder(dir));
  await checkCurrentHolder(dir, lockDir);
  let lost = false;
  let unlock: () => Promise<void>;
  try {
    unlock = await lockfile.lock(dir, {
      lockfilePath: lockDir,
      realpath: false,
      stale: STALE_MS,
      update: REFRESH_MS,
      onCompromised: () => {
        // The lock and the holder file may be another process's now: touch neither.
        lost = true;
        heldHere.delete(dir);
        onCompromised();
      },
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ELOCKED") throw lockedError(await readHolder(dir));
    throw fromSystemError(err, "lock the data directory");
  }
  heldHere.add(dir);
  const holderFile = join(dir, HOLDER_NAME);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    if (lost) return;
    heldHere.delete(dir);
    await unlink(holderFile).catch(() => {});
    await unlock().catch(() => {});
  };
  try {
    const holder: DataDirHolder = { pid: process.pid, hostname: hostname(), since: new Date().toISOString() };
    await writeFile(`${holderFile}.${process.pid}.tmp`, JSON.stringify(holder));
    await rename(`${holderFile}.${process.pid}.tmp`, holderFile);
  } catch (err) {
    await release();
    throw fromSystemError(err, "lock the data directory");
  }
  return { release };
}
