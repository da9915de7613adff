import { constants } from "node:fs";
import { copyFile, link, mkdir, open, readdir, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { descriptorPath, fsyncDirectory, type OpenedDirectory, openDirectoryBeneath } from "@stowage/core/fs";
import { openGivenDirectory } from "../layout/directory-access.js";

// Errors of link() that mean "no hard links here" (another file system, or one without them).
const NO_HARD_LINKS = new Set(["EXDEV", "EPERM", "ENOTSUP", "EOPNOTSUPP", "EMLINK", "ENOSYS"]);

export interface CopyTreeOptions {
  /** Hard-link regular files where the file system allows it; copy them otherwise. */
  link: boolean;
  /** fsync every copied file and directory (before a move deletes the source). */
  fsync: boolean;
  /** Why an entry is left out (reported to `onSkip`; `""` leaves it out silently), or undefined to copy it. */
  skip?: (name: string) => string | undefined;
  onSkip?: (path: string, why: string) => void;
  /** Receives each failure; throw from it to stop the copy. */
  onError: (error: StowageError, path: string) => void;
  signal?: AbortSignal;
}

export interface CopyTreeResult {
  linkedFiles: number;
  copiedFiles: number;
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Copies the directory `from` to `to` (which must not exist): subdirectories, regular files
 * (hard-linked when asked and possible, else copied, cloned where the file system can) and
 * symbolic links as links (never followed). Anything else cannot be copied and is an error.
 * Below `from`, nothing is followed even if it is swapped for a link during the copy: each
 * directory is opened without following, and each file is copied from a descriptor opened so.
 */
export async function copyTree(from: string, to: string, options: CopyTreeOptions): Promise<CopyTreeResult> {
  const result: CopyTreeResult = { linkedFiles: 0, copiedFiles: 0 };

  async function copyFileEntry(reachable: string, sourceName: string, target: string): Promise<void> {
    if (options.link) {
      try {
        // link() never follows a link: a file swapped for one since the listing is linked as a link.
        await link(reachable, target);
        result.linkedFiles++;
        return;
      } catch (err) {
        if (!NO_HARD_LINKS.has(errnoOf(err) ?? "")) throw err;
      }
    }
    // Opened without following, then copied from the descriptor: never the file a link points at.
    const handle = await open(reachable, constants.O_RDONLY | constants.O_NOFOLLOW).catch((err: unknown) => {
      if (errnoOf(err) === "ELOOP") {
        throw new StowageError("FORBIDDEN", `${sourceName} became a symbolic link while it was copied`, {
          cause: err,
          reason: "NOT_COPYABLE",
        });
      }
      throw err;
    });
    try {
      await copyFile(
        descriptorPath(handle.fd, reachable),
        target,
        constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE,
      );
    } finally {
      await handle.close();
    }
    if (options.fsync) await fsyncFile(target);
    result.copiedFiles++;
  }

  async function walk(source: OpenedDirectory, sourceName: string, target: string): Promise<void> {
    try {
      await mkdir(target);
    } catch (err) {
      options.onError(fromSystemError(err, `create ${target}`), sourceName);
      return;
    }
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(source.path, { withFileTypes: true });
    } catch (err) {
      options.onError(fromSystemError(err, `read ${sourceName}`), sourceName);
      return;
    }
    for (const entry of entries) {
      throwIfAborted(options.signal, `copy ${sourceName}`);
      const sourcePath = join(sourceName, entry.name);
      const reachable = `${source.path}/${entry.name}`;
      const targetPath = join(target, entry.name);
      const why = options.skip?.(entry.name);
      if (why !== undefined) {
        if (why !== "") options.onSkip?.(sourcePath, why);
        continue;
      }
      try {
        if (entry.isDirectory()) {
          // Opened without following: a directory swapped for a link since the listing is refused.
          const child = openDirectoryBeneath(source, [entry.name], {
            refusedReason: "NOT_COPYABLE",
            refuseNonDirectories: true,
          });
          if (!child) continue; // removed since the listing
          try {
            await walk(child, sourcePath, targetPath);
          } finally {
            child.close();
          }
        } else if (entry.isFile()) await copyFileEntry(reachable, sourcePath, targetPath);
        else if (entry.isSymbolicLink()) await symlink(await readlink(reachable), targetPath);
        else {
          throw new StowageError(
            "CONFLICT",
            `cannot copy ${sourcePath}: it is not a regular file, directory or symbolic link`,
            { reason: "NOT_COPYABLE" },
          );
        }
      } catch (err) {
        if (StowageError.is(err, "ABORTED")) throw err;
        options.onError(fromSystemError(err, `copy ${sourcePath}`), sourcePath);
      }
    }
    if (options.fsync) {
      try {
        await fsyncDirectory(target);
      } catch (err) {
        options.onError(fromSystemError(err, `sync ${target}`), sourceName);
      }
    }
  }

  const root = openGivenDirectory(from);
  try {
    await walk(root, from, to);
  } finally {
    root.close();
  }
  return result;
}
