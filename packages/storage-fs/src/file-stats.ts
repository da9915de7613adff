import { lstatSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { errnoOf, nextTurn } from "@stowage/core";
import type { DirectoryEntries, FileStat } from "./directory-snapshot.js";

/** Files stat'ed synchronously before the event loop gets a turn. */
const SYNC_BATCH = 64;
/**
 * A synchronous batch slower than this (a millisecond a stat, where a local disk takes a few
 * microseconds and a busy CPU rarely stalls a batch that long) means a slow file system, such as
 * a network mount: the rest goes through the pool.
 */
const SLOW_BATCH_MS = SYNC_BATCH;
/** Concurrent asynchronous stats on a slow file system. */
const ASYNC_POOL = 16;

const MISSING = new Set(["ENOENT", "ENOTDIR"]);

const toStat = (info: { isFile(): boolean; size: number; mtimeMs: number }): FileStat | null =>
  info.isFile() ? { size: info.size, mtimeMs: info.mtimeMs } : null;

function statNow(path: string): FileStat | null {
  try {
    const info = lstatSync(path, { throwIfNoEntry: false });
    return info ? toStat(info) : null;
  } catch (err) {
    if (MISSING.has(errnoOf(err) ?? "")) return null;
    throw err;
  }
}

/**
 * Stats the files `files` (indexes into `entries.orders`, each a file's name) of one open
 * directory (`directoryPath`), keeping each stat in `entries.stats`; a file that is gone (deleted
 * since the directory was read) or is no longer a file gets `null` in the result. Files whose
 * stat is already kept are not read again.
 *
 * Why synchronous: a stat of a cached inode takes a few microseconds, while an asynchronous one
 * costs a thread-pool round trip that is ten times that; batches of {@link SYNC_BATCH} hold the
 * event loop well under a millisecond on a local disk. A batch slower than {@link SLOW_BATCH_MS}
 * (a network mount) switches the rest to {@link ASYNC_POOL} concurrent asynchronous stats.
 */
export async function statEntries(
  directoryPath: string,
  entries: DirectoryEntries,
  files: readonly number[],
): Promise<(FileStat | null)[]> {
  const { orders } = entries;
  // Made for the first listing that asks for sizes and times: a names-only listing needs none.
  entries.stats ??= new Array(orders.length);
  const kept = entries.stats;
  const stats: (FileStat | null)[] = new Array(files.length).fill(null);
  let index = 0;
  while (index < files.length) {
    const started = performance.now();
    const end = Math.min(files.length, index + SYNC_BATCH);
    let read = 0;
    for (; index < end; index++) {
      const file = files[index]!;
      if (!kept[file]) {
        read++;
        const stat = statNow(`${directoryPath}/${orders[file]}`);
        if (stat) kept[file] = stat;
      }
      stats[index] = kept[file] ?? null;
    }
    if (read === 0) continue;
    if (index < files.length) {
      if (performance.now() - started > SLOW_BATCH_MS)
        return statRestConcurrently(directoryPath, { orders, kept }, files, index, stats);
      await nextTurn();
    }
  }
  return stats;
}

async function statRestConcurrently(
  directoryPath: string,
  { orders, kept }: { orders: readonly string[]; kept: (FileStat | undefined)[] },
  files: readonly number[],
  from: number,
  stats: (FileStat | null)[],
): Promise<(FileStat | null)[]> {
  let next = from;
  await Promise.all(
    Array.from({ length: ASYNC_POOL }, async () => {
      while (next < files.length) {
        const index = next++;
        const file = files[index]!;
        if (!kept[file]) {
          try {
            const stat = toStat(await lstat(`${directoryPath}/${orders[file]}`));
            if (stat) kept[file] = stat;
          } catch (err) {
            if (!MISSING.has(errnoOf(err) ?? "")) throw err;
          }
        }
        stats[index] = kept[file] ?? null;
      }
    }),
  );
  return stats;
}
