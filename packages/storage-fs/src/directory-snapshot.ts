import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { compareUtf8, errnoOf } from "@stowage/core";
import type { OpenedDirectory } from "@stowage/core/fs";

/** What a listing needs of a file: kept in its directory's snapshot once read. */
export interface FileStat {
  size: number;
  mtimeMs: number;
}

/** One entry of a directory, in the order a listing walks it. */
export interface SnapshotEntry {
  name: string;
  /** `name` for a file, `name/` for a directory: sorting by it gives global UTF-8 key order. */
  order: string;
  isDirectory: boolean;
  /** The file's stat once a listing has read it while this snapshot was current. */
  stat?: FileStat;
}

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
  read(directory: OpenedDirectory): Promise<SnapshotEntry[]>;
}

/** Directories with fewer entries are read afresh each time: a read costs about a stat. */
const SNAPSHOT_MIN_ENTRIES = 256;
/** Most entries kept over all snapshots (~100 bytes each), least recently used dropped first. */
const SNAPSHOT_MAX_ENTRIES = 400_000;

interface Snapshot {
  identity: string;
  entries: SnapshotEntry[];
}

const toEntry = (dirent: Dirent): SnapshotEntry | undefined => {
  // Symbolic links, sockets and other special files are never objects nor walked into.
  if (dirent.isDirectory()) return { name: dirent.name, order: `${dirent.name}/`, isDirectory: true };
  if (dirent.isFile()) return { name: dirent.name, order: dirent.name, isDirectory: false };
  return undefined;
};

async function readSorted(path: string): Promise<SnapshotEntry[]> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(path, { withFileTypes: true });
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT" || errno === "ENOTDIR") return [];
    throw err;
  }
  const entries: SnapshotEntry[] = [];
  for (const dirent of dirents) {
    const entry = toEntry(dirent);
    if (entry) entries.push(entry);
  }
  return entries.sort((a, b) => compareUtf8(a.order, b.order));
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
    keptEntries -= old.entries.length;
  }

  function keep(key: string, snapshot: Snapshot): void {
    forget(key);
    if (snapshot.entries.length > SNAPSHOT_MAX_ENTRIES) return;
    snapshots.set(key, snapshot);
    keptEntries += snapshot.entries.length;
    for (const oldest of snapshots.keys()) {
      if (keptEntries <= SNAPSHOT_MAX_ENTRIES) break;
      forget(oldest);
    }
  }

  async function identityOf(directory: OpenedDirectory) {
    const info = await stat(directory.path, { bigint: true });
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
        const { identity } = await identityOf(directory);
        if (identity === known.identity) {
          snapshots.delete(key);
          snapshots.set(key, known);
          return known.entries;
        }
        forget(key);
      }
      const readStartedNs = BigInt(Date.now()) * 1_000_000n;
      const entries = await readSorted(directory.path);
      if (entries.length < SNAPSHOT_MIN_ENTRIES) return entries;
      // Read after the entries: if the directory changed since the read began, its times say so.
      const { identity, changedNs } = await identityOf(directory).catch(() => ({
        identity: "",
        changedNs: readStartedNs,
      }));
      if (readStartedNs - changedNs > BigInt(settledMs(changedNs)) * 1_000_000n) {
        keep(key, { identity, entries });
      }
      return entries;
    },
  };
}
