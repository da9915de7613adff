import { readdir, stat, utimes } from "node:fs/promises";
import { join } from "node:path";

/**
 * Moves the times of every file under `root` back by `ms`: what waiting `ms` does to how old a
 * store sees them, without the wait (a blob garbage collection with `graceMs: 0` still keeps
 * blobs stamped within the last second, its slack for stores that keep whole seconds).
 */
export async function ageFiles(root: string, ms: number): Promise<void> {
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const { atimeMs, mtimeMs } = await stat(path);
    await utimes(path, new Date(atimeMs - ms), new Date(mtimeMs - ms));
  }
}
