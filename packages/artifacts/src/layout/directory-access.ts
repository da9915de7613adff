import { basename, dirname, join } from "node:path";
import { StowageError } from "@stowage/core";
import { type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";

/** Opens an existing directory the caller gave (following a link there: the caller chose it). */
export function openGivenDirectory(dir: string): OpenedDirectory {
  const opened = openDirectoryBeneath(dir, []);
  if (!opened) {
    throw new StowageError("NOT_FOUND", `${dir} does not exist`);
  }
  return opened;
}

/** An artifacts directory for one read: `path` to reach it (null when it does not exist), `dir` to name it. */
export interface DirectoryLocation {
  path: string | null;
  dir: string;
}

/** How a store reaches its artifacts directory, opened anew for every operation. */
export interface DirectoryAccess {
  /** The directory as callers name it (absolute). */
  readonly dir: string;
  /** Opens the directory (creating it with `create`); null when it is missing. */
  open(create: boolean): OpenedDirectory | null;
  /** Runs `use` with the directory open (its `path`, and itself); null (without calling it) when the directory is missing. */
  use<T>(create: boolean, use: (path: string, directory: OpenedDirectory) => Promise<T>): Promise<T | null>;
  /** Runs `use` with the directory open, or with a null `path` when it is missing. */
  locate<T>(use: (location: DirectoryLocation) => Promise<T>): Promise<T>;
}

/**
 * Access to an artifacts directory. A directory given as such (`createArtifactStore({ dir })`) may
 * be a link. One derived from a session file lies below the directory the caller gave (the
 * session file's), so it is opened without following a link there: FORBIDDEN (reason
 * `ARTIFACTS_DIR_IS_LINK`) instead of reading and writing wherever a planted link points.
 */
export function directoryAccess(dir: string, options: { derived: boolean }): DirectoryAccess {
  return options.derived
    ? directoryAccessBeneath(dirname(dir), [basename(dir)])
    : directoryAccessBeneath(dir, []);
}

/**
 * Access to the directory `root/segments…`, each segment opened without following a link
 * (FORBIDDEN, reason `refusedReason` for the last segment, `SYMLINK_REFUSED` for those above it);
 * `root` is the caller's and may be a link.
 */
export function directoryAccessBeneath(
  root: string,
  segments: readonly string[],
  refusedReason = "ARTIFACTS_DIR_IS_LINK",
): DirectoryAccess {
  const dir = join(root, ...segments);
  const above = segments.slice(0, -1);
  const last = segments.at(-1);
  function open(create: boolean): OpenedDirectory | null {
    if (last === undefined) return openDirectoryBeneath(root, [], { create });
    const parent = above.length === 0 ? root : openDirectoryBeneath(root, above, { create });
    if (parent === null) return null;
    try {
      return openDirectoryBeneath(parent, [last], { create, refusedReason });
    } finally {
      if (typeof parent !== "string") parent.close();
    }
  }
  return {
    dir,
    open,
    async locate(use) {
      const opened = open(false);
      try {
        return await use({ path: opened?.path ?? null, dir });
      } finally {
        opened?.close();
      }
    },
    async use(create, use) {
      const opened = open(create);
      if (!opened) return null;
      try {
        return await use(opened.path, opened);
      } finally {
        opened.close();
      }
    },
  };
}
