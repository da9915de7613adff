import { constants } from "node:fs";
import { copyFile, link, mkdir, open, readdir, readlink, symlink } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, fromSystemError, StowageError, throwIfAborted } from "@stowage/core";
import { fsyncDirectory } from "@stowage/core/fs";

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
 */
export async function copyTree(from: string, to: string, options: CopyTreeOptions): Promise<CopyTreeResult> {
  const result: CopyTreeResult = { linkedFiles: 0, copiedFiles: 0 };

  async function copyFileEntry(source: string, target: string): Promise<void> {
    if (options.link) {
      try {
        await link(source, target);
        result.linkedFiles++;
        return;
      } catch (err) {
        if (!NO_HARD_LINKS.has(errnoOf(err) ?? "")) throw err;
      }
    }
    await copyFile(source, target, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
    if (options.fsync) await fsyncFile(target);
    result.copiedFiles++;
  }

  async function walk(source: string, target: string): Promise<void> {
    try {
      await mkdir(target);
    } catch (err) {
      options.onError(fromSystemError(err, `create ${target}`), source);
      return;
    }
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(source, { withFileTypes: true });
    } catch (err) {
      options.onError(fromSystemError(err, `read ${source}`), source);
      return;
    }
    for (const entry of entries) {
      throwIfAborted(options.signal, `copy ${source}`);
      const sourcePath = join(source, entry.name);
      const targetPath = join(target, entry.name);
      const why = options.skip?.(entry.name);
      if (why !== undefined) {
        if (why !== "") options.onSkip?.(sourcePath, why);
        continue;
      }
      try {
        if (entry.isDirectory()) await walk(sourcePath, targetPath);
        else if (entry.isFile()) await copyFileEntry(sourcePath, targetPath);
        else if (entry.isSymbolicLink()) await symlink(await readlink(sourcePath), targetPath);
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
        options.onError(fromSystemError(err, `sync ${target}`), source);
      }
    }
  }

  await walk(from, to);
  return result;
}
