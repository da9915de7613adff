import { compareUtf8, StowageError, throwIfAborted } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath, TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { type DirectoryEntries, type DirectorySnapshots, isDirectoryOrder } from "./directory-snapshot.js";

/** Files of one directory, in key order, reachable while the walk is paused at this batch. */
export interface WalkedBatch {
  /** The directory's descriptor path: `${directoryPath}/${name}` is a file; valid until the walk moves on. */
  directoryPath: string;
  /** The key prefix the directory stands for (`""` or ending in `/`). */
  directoryKey: string;
  /** The directory's entries (its snapshot's when it has one: stats read into it are kept). */
  entries: DirectoryEntries;
  /** Indexes into `entries.orders` of the batch's files (never directories), in key order; a file's order is its name. */
  files: number[];
}

export interface WalkOptions {
  /** Directory to start from (opened beneath the root) and the key prefix it stands for (`""` or ending in `/`). */
  start: { directory: OpenedDirectory; key: string };
  /** Only keys starting with this. */
  prefix: string;
  /** Only keys strictly after this, in UTF-8 order. */
  startAfter?: string;
  /** `objects` (default) yields stored objects; `temp-files` yields only in-progress writes. */
  yields?: "objects" | "temp-files";
  /** Where sorted directory entries are kept between walks. */
  snapshots: DirectorySnapshots;
  /** Most files per batch. Default 256. */
  batchSize?: number;
  signal?: AbortSignal;
}

/** Opens the subdirectory `name`, never through a link; null when it is gone, a link or not a directory. */
function openChild(directory: OpenedDirectory, name: string): OpenedDirectory | null {
  try {
    return openDirectoryBeneath(directory, [name]);
  } catch (err) {
    const link = StowageError.is(err, "FORBIDDEN") && err.reason === "SYMLINK_REFUSED";
    if (link || StowageError.is(err, "CONFLICT")) return null;
    throw err;
  }
}

/**
 * Index of the first entry that may hold a key after `startAfter`: binary search over the sorted
 * entries (so a page resumes in O(log n), not by skipping every earlier name), stepping back one
 * for a directory whose subtree contains `startAfter` itself.
 */
function firstIndexAfter(orders: readonly string[], directoryKey: string, startAfter: string): number {
  let low = 0;
  let high = orders.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (compareUtf8(directoryKey + orders[middle]!, startAfter) <= 0) low = middle + 1;
    else high = middle;
  }
  const before = orders[low - 1];
  if (before !== undefined && isDirectoryOrder(before) && startAfter.startsWith(directoryKey + before))
    return low - 1;
  return low;
}

// A directory's keys all start with `name/`, so ordering siblings by `name/` for directories and
// `name` for files yields every key in global UTF-8 order in a single depth-first pass.

/**
 * Yields the files under `start` in UTF-8 key order, in batches of one directory's files, pruning
 * subtrees that cannot match. Subdirectories are opened without following links (a directory
 * swapped for a link during the walk is skipped, like any link); `start` is not closed here.
 */
export async function* walkSorted(options: WalkOptions): AsyncGenerator<WalkedBatch> {
  const { prefix, startAfter, yields = "objects", signal, snapshots } = options;
  const batchSize = options.batchSize ?? 256;

  async function* walk(directory: OpenedDirectory, directoryKey: string): AsyncGenerator<WalkedBatch> {
    throwIfAborted(signal, "fs list");
    const entries = await snapshots.read(directory);
    const { orders } = entries;
    let files: number[] = [];
    const batch = (): WalkedBatch => {
      const full = { directoryPath: directory.path, directoryKey, entries, files };
      files = [];
      return full;
    };
    const from = startAfter === undefined ? 0 : firstIndexAfter(orders, directoryKey, startAfter);
    // A directory inside the prefix (`prefix` is a prefix of its key) matches in every entry.
    const inside = directoryKey.startsWith(prefix);
    for (let index = from; index < orders.length; index++) {
      // `name/` for a directory: its subtree; `name` for a file: its name and key's last segment.
      const order = orders[index]!;
      const isDirectory = isDirectoryOrder(order);
      if (!inside) {
        // A directory matches when its subtree is under the prefix or holds it; a file only when
        // it is under it.
        const subtree = directoryKey + order;
        const holdsPrefix = isDirectory && prefix.startsWith(subtree);
        if (!holdsPrefix && !subtree.startsWith(prefix)) {
          // Sorted: once past the prefix, nothing later in this directory matches.
          if (compareUtf8(subtree, prefix) > 0) break;
          continue;
        }
      }
      // The prefix holds no `/`: an order starts with it exactly when its name does.
      const isTemp = order.startsWith(TEMP_FILE_PREFIX);
      if (isDirectory) {
        if (isTemp) continue;
        const child = openChild(directory, order.slice(0, -1));
        if (!child) continue;
        try {
          if (files.length > 0) yield batch();
          yield* walk(child, directoryKey + order);
        } finally {
          child.close();
        }
      } else {
        if (isTemp !== (yields === "temp-files")) continue;
        if (startAfter !== undefined && compareUtf8(directoryKey + order, startAfter) <= 0) continue;
        files.push(index);
        if (files.length === batchSize) {
          yield batch();
          throwIfAborted(signal, "fs list");
        }
      }
    }
    if (files.length > 0) yield batch();
  }

  yield* walk(options.start.directory, options.start.key);
}
