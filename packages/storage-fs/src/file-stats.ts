import { lstatSync } from "node:fs";
import { lstat } from "node:fs/promises";
import { errnoOf, nextTurn } from "@stowage/core";
import type { FileStat, SnapshotEntry } from "./directory-snapshot.js";

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
 * Stats files of one open directory (`directoryPath`), filling each entry's `stat`; an entry
 * whose file is gone (deleted since the directory was read) or is no longer a file gets `null`
 * in the result. Entries that already carry a stat are not read again.
 *
 * Why synchronous: a stat of a cached inode takes a few microseconds, while an asynchronous one
 * costs a thread-pool round trip that is ten times that; batches of {@link SYNC_BATCH} hold the
 * event loop well under a millisecond on a local disk. A batch slower than {@link SLOW_BATCH_MS}
 * (a network mount) switches the rest to {@link ASYNC_POOL} concurrent asynchronous stats.
 */
export async function statEntries(
  directoryPath: string,
  entries: readonly SnapshotEntry[],
): Promise<(FileStat | null)[]> {
  const stats: (FileStat | null)[] = new Array(entries.length).fill(null);
  let index = 0;
  while (index < entries.length) {
    const started = performance.now();
    const end = Math.min(entries.length, index + SYNC_BATCH);
    let read = 0;
    for (; index < end; index++) {
      const entry = entries[index]!;
      if (!entry.stat) {
        read++;
        const stat = statNow(`${directoryPath}/${entry.name}`);
        if (stat) entry.stat = stat;
      }
      stats[index] = entry.stat ?? null;
    }
    if (read === 0) continue;
    if (index < entries.length) {
      if (performance.now() - started > SLOW_BATCH_MS)
        return statRestConcurrently(directoryPath, entries, index, stats);
      await nextTurn();
    }
  }
  return stats;
}

async function statRestConcurrently(
  directoryPath: string,
  entries: readonly SnapshotEntry[],
  from: number,
  stats: (FileStat | null)[],
): Promise<(FileStat | null)[]> {
  let next = from;
  await Promise.all(
    Array.from({ length: ASYNC_POOL }, async () => {
      while (next < entries.length) {
        const index = next++;
        const entry = entries[index]!;
        if (!entry.stat) {
          try {
            const stat = toStat(await lstat(`${directoryPath}/${entry.name}`));
            if (stat) entry.stat = stat;
          } catch (err) {
            if (!MISSING.has(errnoOf(err) ?? "")) throw err;
          }
        }
        stats[index] = entry.stat ?? null;
      }
    }),
  );
  return stats;
}
