import { rmdir } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Removes the directories a failed restore created, deepest first, each only while empty: a
 * directory that another restore (or anyone) has put something into meanwhile stays, with what
 * it holds. `created` lists them top first, as `openDirectoryBeneath` reports them; the root is
 * reported by its topmost new ancestor, so its chain down to `root` is removed too.
 */
export async function removeCreatedDirectories(created: readonly string[], root: string): Promise<void> {
  const chain: string[] = [];
  for (const path of created) {
    chain.push(path);
    if (root.startsWith(`${path}/`)) {
      for (let dir = root; dir !== path; dir = dirname(dir)) chain.push(dir);
    }
  }
  const deepestFirst = [...new Set(chain)].sort((a, b) => b.length - a.length);
  for (const dir of deepestFirst) await rmdir(dir).catch(() => {});
}
