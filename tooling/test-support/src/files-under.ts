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
