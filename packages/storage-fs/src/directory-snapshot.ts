import type { Dirent } from "node:fs";
import { readdirSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { compareUtf8, errnoOf } from "@stowage/core";
import type { OpenedDirectory } from "@stowage/core/fs";

/** What a listing needs of a file: kept in its directory's snapshot once read. */
export interface FileStat {
  size: number;
  mtimeMs: number;
}

/**
 * A directory's entries in the order a listing walks them. An entry is its order string alone:
 * a file's name, or a directory's name and `/` (sorting by it gives global UTF-8 key order; a
 * file name never holds `/`). Strings, not an object an entry: the objects of a 10,000-file
 * directory lived through the whole walk, so every young-generation collection during it copied
 * them; without them a names-only listing takes about a fifth less CPU (2026-12-03).
 */
export interface DirectoryEntries {
  orders: readonly string[];
  /** Files' stats by index into `orders`, once a listing has read them while this snapshot was current. */
  stats?: (FileStat | undefined)[];
}

/** Whether an entry's order string is a directory's. */
export const isDirectoryOrder = (order: string): boolean => order.endsWith("/");

/**
 * Keeps the sorted entries (and stats, once read) of large directories between listings, so that
 * a paged listing resumes from its cursor without reading and sorting the whole directory again,
 * and a repeated listing does not stat every file again.
 *
 * Consistency: a snapshot is used only while the directory's identity (device, inode, mtime and
 * ctime, in nanoseconds) is what it was when the snapshot was read; adding, removing or renaming
 * an entry changes the mtime and ctime, so the next listing reads the directory again. A
 * snapshot is kept only when the directory had not changed for {@link settledMs} before it was
 * read, so that a change within the same timestamp tick cannot go unseen. The store's `touch`
 * changes its directory's times too (see `fs-object-store.ts`). What a snapshot cannot see is a
 * file rewritten in place, or its times set, by another program without going through a store:
 * its listed size and time stay those of the snapshot until the directory changes. `get`, `head`
 * and `stream` always read the file itself.
 */
export interface DirectorySnapshots {
  /** The directory's entries in walk order, from the snapshot when it is current. */
  read(directory: OpenedDirectory): Promise<DirectoryEntries>;
}

/** Directories with fewer entries are read afresh each time: a read costs about a stat. */
const SNAPSHOT_MIN_ENTRIES = 256;
/** Most entries kept over all snapshots (~100 bytes each), least recently used dropped first. */
const SNAPSHOT_MAX_ENTRIES = 400_000;

interface Snapshot {
  identity: string;
  entries: DirectoryEntries;
}

/** A UTF-16 surrogate: the only code units whose UTF-16 order is not their UTF-8 byte order. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Directories whose size the file system reports at most this are read on the event loop: the
 * read takes about what a trip to the thread pool and back costs (on the 2-core VM the benches
 * run on, 1,000 entries right after a `sync`: 1.1 ms read synchronously against 2.2 ms through
 * the pool; 10,000: 8.8 against 11.3 ms), so a small directory's listing costs half as much. A
 * directory's size grows with its entries (ext4 36 KiB for 1,000 names of 12 characters; tmpfs 20
 * bytes an entry), so the loop is held for a few thousand entries at most. Where a file system
 * reports less than a directory holds (an overlayfs directory whose entries are in a lower
 * layer), its first read holds the loop longer; later ones answer from its snapshot.
 */
export const SYNC_READ_MAX_DIRECTORY_BYTES = 64 * 1024;

/** Whether the directory is small enough to read synchronously; false when it cannot be stat'ed (the read then says why). */
function isSmallDirectory(path: string): boolean {
  try {
    const size = statSync(path, { throwIfNoEntry: false })?.size;
    return size !== undefined && size <= SYNC_READ_MAX_DIRECTORY_BYTES;
  } catch {
    return false;
  }
}

async function readSorted(path: string): Promise<DirectoryEntries> {
  let dirents: Dirent[];
  try {
    dirents = isSmallDirectory(path)
      ? readdirSync(path, { withFileTypes: true })
      : await readdir(path, { withFileTypes: true });
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT" || errno === "ENOTDIR") return { orders: [] };
    throw err;
  }
  // Sorted as strings, by the engine's own comparison (UTF-16 code units): a comparator written
  // in JavaScript, called ~130,000 times for 10,000 names in hash order, cost about twice as much
  // (4.5-5 ms against 2-3). UTF-16 order is UTF-8 order unless a name holds a surrogate (a
  // character beyond U+FFFF); then sort again by UTF-8. A file name never holds `/`, so the
  // trailing `/` tells a directory's order from a file's. Each name is tested on its own: one
  // test of all of them joined made a string of every name first (10,000 UUID names, 2 ms a
  // listing on 2026-12-02, against 0.16 ms). A file's name is its order string as it came (no
  // copy); a directory's is a new one.
  const orders: string[] = [];
  for (const dirent of dirents) {
    // Symbolic links, sockets and other special files are never objects nor walked into. Files
    // first: most entries are, and each then costs one test.
    if (dirent.isFile()) orders.push(dirent.name);
    else if (dirent.isDirectory()) orders.push(`${dirent.name}/`);
  }
  orders.sort();
  if (orders.some((order) => SURROGATE.test(order))) orders.sort(compareUtf8);
  return { orders };
}

/**
 * How long a directory must have been unchanged before its snapshot is trusted: longer than the
 * file system's timestamp tick. Whole-second times mean a coarse file system (ext3, FAT, some
 * network mounts); otherwise ticks are at most a scheduler tick (Linux: ≤ 10 ms).
 */
function settledMs(changedNs: bigint): number {
  return changedNs % 1_000_000_000n === 0n ? 2_000 : 100;
}

export function createDirectorySnapshots(): DirectorySnapshots {
  // Map order is insertion order: re-inserting on use makes the first key the least recently used.
  const snapshots = new Map<string, Snapshot>();
  let keptEntries = 0;

  function forget(key: string): void {
    const old = snapshots.get(key);
    if (!old) return;
    snapshots.delete(key);
    keptEntries -= old.entries.orders.length;
  }

  function keep(key: string, snapshot: Snapshot): void {
    forget(key);
    if (snapshot.entries.orders.length > SNAPSHOT_MAX_ENTRIES) return;
    snapshots.set(key, snapshot);
    keptEntries += snapshot.entries.orders.length;
    for (const oldest of snapshots.keys()) {
      if (keptEntries <= SNAPSHOT_MAX_ENTRIES) break;
      forget(oldest);
    }
  }

  // Synchronous: a stat of an open directory's cached inode takes microseconds, where a trip
  // through the thread pool (and back to a busy event loop) takes far longer.
  function identityOf(directory: OpenedDirectory) {
    const info = statSync(directory.path, { bigint: true });
    // Math.max takes no bigint. The ctime follows every change; utimes may set an mtime ahead of it.
    let changedNs = info.ctimeNs;
    if (info.mtimeNs > changedNs) changedNs = info.mtimeNs;
    return { identity: `${info.dev}:${info.ino}:${info.mtimeNs}:${info.ctimeNs}`, changedNs };
  }

  return {
    async read(directory) {
      const key = directory.lexicalPath;
      const known = snapshots.get(key);
      if (known) {
        const { identity } = identityOf(directory);
        if (identity === known.identity) {
          snapshots.delete(key);
          snapshots.set(key, known);
          return known.entries;
        }
        forget(key);
      }
      const readStartedNs = BigInt(Date.now()) * 1_000_000n;
      const entries = await readSorted(directory.path);
      if (entries.orders.length < SNAPSHOT_MIN_ENTRIES) return entries;
      // Read after the entries: if the directory changed since the read began, its times say so.
      let identity = "";
      let changedNs = readStartedNs;
      try {
        ({ identity, changedNs } = identityOf(directory));
      } catch {
        // Not kept: nothing says whether the directory changed while it was read.
      }
      if (readStartedNs - changedNs > BigInt(settledMs(changedNs)) * 1_000_000n) {
        keep(key, { identity, entries });
      }
      return entries;
    },
  };
}
