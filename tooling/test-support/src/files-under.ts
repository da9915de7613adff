import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";

/**
 * Every regular file below `dir`, hidden ones included, as sorted `/`-separated paths relative to
 * it. With `includeSpecial`, everything that is not a directory: symlinks, FIFOs and sockets too,
 * for tests that prove nothing at all appeared somewhere.
 */
export async function filesUnder(dir: string, options: { includeSpecial?: boolean } = {}): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => (options.includeSpecial ? !entry.isDirectory() : entry.isFile()))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort();
}

/**
 * The put journal an fs store (`@stowage/storage-fs`) keeps under its root: segments of small
 * puts not yet checkpointed, not objects. Its name carries the reserved temp prefix.
 */
export const FS_JOURNAL_DIRECTORY = ".stowage-tmp-journal";

/** Paths relative to an fs store's root, without its put journal's (what it stores, and anything left over). */
export function withoutJournal(paths: readonly string[]): string[] {
  return paths.filter(
    (path) => path !== FS_JOURNAL_DIRECTORY && !path.startsWith(`${FS_JOURNAL_DIRECTORY}/`),
  );
}
