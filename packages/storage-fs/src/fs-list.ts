import { lstat, unlink } from "node:fs/promises";
import type { ListItem, ListPage } from "@stowage/core";
import { statEntries } from "./file-stats.js";
import { type FsContext, isMissing } from "./fs-context.js";
import { type WalkedBatch, type WalkOptions, walkSorted } from "./sorted-walk.js";

/** Age after which `removeStaleTempFiles` treats an in-progress write as abandoned (1 hour). */
const DEFAULT_STALE_TEMP_FILE_MS = 60 * 60 * 1000;

/** The batch's files as list items, in order; a file deleted since the directory was read is left out. */
async function itemsOf(batch: WalkedBatch): Promise<ListItem[]> {
  const stats = await statEntries(batch.directoryPath, batch.entries, batch.files);
  const items: ListItem[] = [];
  for (let i = 0; i < stats.length; i++) {
    const stat = stats[i];
    if (stat) {
      items.push({
        key: batch.directoryKey + batch.entries.orders[batch.files[i]!],
        size: stat.size,
        // Rounded as Node's `Stats.mtime` is (what `head` returns): `new Date` alone truncates the
        // fraction, and a listing 1 ms off `head` reads as "touched" to garbage collection.
        lastModified: new Date(Math.round(stat.mtimeMs)),
      });
    }
  }
  return items;
}

/** Walks the files under a listing prefix; nothing when its directory does not exist. */
async function* walkPrefix(
  context: FsContext,
  prefix: string,
  walk: Omit<WalkOptions, "start" | "prefix" | "snapshots">,
) {
  const start = context.paths.directoryForPrefix(prefix);
  const directory = context.paths.openDirectoryOf(start.segments, false);
  if (!directory) return;
  try {
    yield* walkSorted({
      ...walk,
      snapshots: context.snapshots,
      prefix,
      start: { directory, key: start.key },
    });
  } finally {
    directory.close();
  }
}

/** One page of the keys under `prefix` after `cursor`, in UTF-8 order. */
export async function listFiles(
  context: FsContext,
  { prefix, cursor, limit, signal }: { prefix: string; cursor?: string; limit: number; signal?: AbortSignal },
): Promise<ListPage> {
  const items: ListItem[] = [];
  let more = false;
  // Batches no larger than what the page still needs (plus one to know whether more follow),
  // so a page stats about its own files, however large the directory.
  const walk = walkPrefix(context, prefix, {
    startAfter: cursor,
    signal,
    batchSize: Math.min(limit + 1, 256),
  });
  pages: for await (const batch of walk) {
    for (let offset = 0; offset < batch.files.length; ) {
      if (items.length === limit) {
        more = true;
        break pages;
      }
      const files = batch.files.slice(offset, offset + limit - items.length + 1);
      offset += files.length;
      for (const item of await itemsOf({ ...batch, files })) {
        if (items.length === limit) {
          more = true;
          break pages;
        }
        items.push(item);
      }
    }
  }
  return { items, cursor: more ? items[items.length - 1]!.key : undefined };
}

/** Every key under `prefix`, in UTF-8 order, a directory at a time. */
export async function* iterateFiles(
  context: FsContext,
  { prefix, signal }: { prefix: string; signal?: AbortSignal },
): AsyncGenerator<ListItem> {
  // A plain loop: `yield*` over an array in an async generator wraps every item in one more promise.
  for await (const batch of walkPrefix(context, prefix, { signal })) {
    for (const item of await itemsOf(batch)) yield item;
  }
}

/**
 * Every key under `prefix`, in UTF-8 order, in batches of one directory's files (at most
 * `pageSize`), from the directories' entries alone: no file is stat'ed, which is what a listing of
 * sizes and times pays per file of a directory that changed.
 */
export async function* iterateFileKeys(
  context: FsContext,
  { prefix, signal, pageSize }: { prefix: string; signal?: AbortSignal; pageSize: number },
): AsyncGenerator<string[]> {
  for await (const batch of walkPrefix(context, prefix, { signal, batchSize: pageSize })) {
    const { directoryKey, entries, files } = batch;
    yield files.map((file) => directoryKey + entries.orders[file]);
  }
}

/** Removes temp files of writes that never finished, older than `olderThanMs` (default 1 hour); returns how many. */
export async function removeStaleTempFiles(
  context: FsContext,
  sweep: { olderThanMs?: number; signal?: AbortSignal } = {},
): Promise<number> {
  const cutoff = Date.now() - (sweep.olderThanMs ?? DEFAULT_STALE_TEMP_FILE_MS);
  let removed = 0;
  for await (const batch of walkPrefix(context, "", { yields: "temp-files", signal: sweep.signal })) {
    for (const file of batch.files) {
      const path = `${batch.directoryPath}/${batch.entries.orders[file]}`;
      try {
        // Read afresh: a snapshot's stat is of a finished file, a temp file's time moves.
        if ((await lstat(path)).mtimeMs <= cutoff) {
          await unlink(path);
          removed++;
        }
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
  }
  return removed;
}
