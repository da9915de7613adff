import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { compareUtf8, errnoOf, throwIfAborted } from "@stowage/core";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";

export interface WalkedFile {
  key: string;
  path: string;
}

export interface WalkOptions {
  /** Directory to start from and the key prefix it stands for (`""` or ending in `/`). */
  start: { path: string; key: string };
  /** Only keys starting with this. */
  prefix: string;
  /** Only keys strictly after this, in UTF-8 order. */
  startAfter?: string;
  /** `objects` (default) yields stored objects; `temp-files` yields only in-progress writes. */
  yields?: "objects" | "temp-files";
  signal?: AbortSignal;
}

async function readDirectory(path: string): Promise<Dirent[]> {
  try {
    return await readdir(path, { withFileTypes: true });
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT" || errno === "ENOTDIR") return [];
    throw err;
  }
}

// A directory's keys all start with `name/`, so ordering siblings by `name/` for directories and
// `name` for files yields every key in global UTF-8 order in a single depth-first pass.
const orderKey = (entry: Dirent) => (entry.isDirectory() ? `${entry.name}/` : entry.name);

/** Yields the files under `start` as keys, in UTF-8 key order, pruning subtrees that cannot match. */
export async function* walkSorted(options: WalkOptions): AsyncGenerator<WalkedFile> {
  const { prefix, startAfter, yields = "objects", signal } = options;

  async function* walk(directory: string, directoryKey: string): AsyncGenerator<WalkedFile> {
    throwIfAborted(signal, "fs list");
    const entries = await readDirectory(directory);
    const ordered = entries
      .map((entry) => ({ entry, order: orderKey(entry) }))
      .sort((a, b) => compareUtf8(a.order, b.order));
    for (const { entry } of ordered) {
      const isTemp = entry.name.startsWith(TEMP_FILE_PREFIX);
      const key = directoryKey + entry.name;
      if (entry.isDirectory()) {
        if (isTemp) continue;
        const subtree = `${key}/`;
        if (!subtree.startsWith(prefix) && !prefix.startsWith(subtree)) continue;
        if (
          startAfter !== undefined &&
          compareUtf8(subtree, startAfter) < 0 &&
          !startAfter.startsWith(subtree)
        ) {
          continue;
        }
        yield* walk(join(directory, entry.name), subtree);
      } else if (entry.isFile()) {
        if (isTemp !== (yields === "temp-files")) continue;
        if (!key.startsWith(prefix)) continue;
        if (startAfter !== undefined && compareUtf8(key, startAfter) <= 0) continue;
        yield { key, path: join(directory, entry.name) };
      }
      // Symbolic links, sockets and other special files are never objects.
    }
  }

  yield* walk(options.start.path, options.start.key);
}
