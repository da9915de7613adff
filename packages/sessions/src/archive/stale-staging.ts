import { lstat, readdir } from "node:fs/promises";
import { type OpenedDirectory, removeTreeBeneath, TEMP_FILE_PREFIX } from "@stowage/core/fs";

/** Names of restore staging directories inside a project directory start with this. */
export const STAGING_PREFIX = `${TEMP_FILE_PREFIX}restore-`;
/** A staging directory older than this was left by a restore that crashed, and is removed. */
const STALE_STAGING_MS = 60 * 60 * 1000;

/**
 * Removes staging directories that restores killed mid-way left in `projectDir` (held open), each
 * through descriptors, never following a link (core's `removeTreeBeneath`). Young ones are kept:
 * they may belong to a restore running right now in another process.
 */
export async function removeStaleStaging(
  projectDir: OpenedDirectory,
  olderThanMs = STALE_STAGING_MS,
): Promise<number> {
  let removed = 0;
  for (const name of await readdir(projectDir.path).catch(() => [] as string[])) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const info = await lstat(`${projectDir.path}/${name}`).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > olderThanMs) {
      await removeTreeBeneath(projectDir, name);
      removed++;
    }
  }
  return removed;
}
