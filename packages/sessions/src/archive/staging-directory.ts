import { randomBytes } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath, removeTreeBeneath } from "@stowage/core/fs";
import { STAGING_PREFIX } from "./stale-staging.js";

/**
 * A restore's private directory inside the target directory, with its two subdirectories, all
 * held open: the agent owning the target can rename or swap any of them for a link at any time,
 * so after their creation they are reached only through their descriptors, never by path.
 */
export interface StagingDirectory {
  /**
   * Holds the files being restored, flat: the one at `paths[i]` is written as `i`, so that no
   * directory between this one and a staged file exists to be swapped for a link.
   */
  readonly staged: OpenedDirectory;
  /** Where the files they replace wait until the swap is over. */
  readonly aside: OpenedDirectory;
  /** Closes it and removes it with what it holds, never following a link (core's `removeTreeBeneath`). */
  remove(): Promise<void>;
}

function opened(directory: OpenedDirectory | null, name: string): OpenedDirectory {
  if (directory) return directory;
  throw new StowageError("UNAVAILABLE", `the restore's staging directory ${name} was removed while in use`, {
    reason: "STAGING_REMOVED",
  });
}

/** Creates a staging directory (mode 0700) in `target` and opens it and its two subdirectories. */
export async function createStagingDirectory(target: OpenedDirectory): Promise<StagingDirectory> {
  const name = `${STAGING_PREFIX}${randomBytes(8).toString("hex")}`;
  // mkdir never follows a link at its last component; one planted first fails it with EEXIST.
  await mkdir(`${target.path}/${name}`, { mode: 0o700 });
  const held: OpenedDirectory[] = [];
  try {
    const root = opened(openDirectoryBeneath(target, [name], { refuseNonDirectories: true }), name);
    held.push(root);
    const staged = opened(
      openDirectoryBeneath(root, ["new"], { create: true, refuseNonDirectories: true }),
      name,
    );
    held.push(staged);
    const aside = opened(
      openDirectoryBeneath(root, ["old"], { create: true, refuseNonDirectories: true }),
      name,
    );
    held.push(aside);
    return {
      staged,
      aside,
      async remove() {
        for (const directory of held) directory.close();
        await removeTreeBeneath(target, name);
      },
    };
  } catch (err) {
    for (const directory of held) directory.close();
    await removeTreeBeneath(target, name).catch(() => {});
    throw err;
  }
}
