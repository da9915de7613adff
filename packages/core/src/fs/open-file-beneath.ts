import { constants, type Stats, statSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { join } from "node:path";
import { describeValue } from "../describe-value.js";
import { StowageError } from "../errors.js";
import { errnoOf, fromSystemError } from "../system-errors.js";
import { assertSegment, type OpenedDirectory, openDirectoryBeneath, symlinkRefused } from "./open-beneath.js";

/**
 * O_NOFOLLOW: a link as the file itself is refused (ELOOP). O_NONBLOCK: a FIFO opens at once (its
 * fstat then refuses it) instead of waiting for a writer while it holds one of libuv's four
 * threads. O_NOCTTY: a terminal planted there never becomes the process's controlling terminal.
 */
const FILE_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** Options of {@link openFileBeneath}. */
export interface OpenFileBeneathOptions {
  /** The reason of the FORBIDDEN error a link below the root gets. Default `SYMLINK_REFUSED`. */
  refusedReason?: string;
  /**
   * Refuses a file with other names (a link count above 1): FORBIDDEN, reason `HARD_LINKED`. Where
   * someone else chooses the path, a hard link may be another name of a file outside the root,
   * which no walk can see. Default false.
   */
  refuseHardLinks?: boolean;
}

/** A regular file open for reading, found beneath a root without following a link. */
export interface OpenedFile {
  handle: FileHandle;
  /** The descriptor's own fstat: the file that was opened, whatever its path names now. */
  stats: Stats;
  /** The file's path as the caller spells the root, for messages; never opened again. */
  lexicalPath: string;
}

function refusedFile(path: string, what: string, reason: string, cause?: unknown): StowageError {
  return new StowageError("FORBIDDEN", `${describeValue(path)} ${what}`, {
    reason,
    details: { path },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** FORBIDDEN (reason `NOT_A_REGULAR_FILE`): a directory, FIFO, socket or device where a file was asked for. */
function notARegularFile(path: string, cause?: unknown): StowageError {
  return refusedFile(path, "is not a regular file", "NOT_A_REGULAR_FILE", cause);
}

/**
 * The directory the file is in, held open, and its name; null when a directory on the way is
 * missing or a file. A string root with the file right in it is not opened on its own: the root
 * (a link there is the caller's choice) is resolved in the file's own open.
 */
function parentOf(
  root: string | OpenedDirectory,
  segments: readonly string[],
  options: OpenFileBeneathOptions,
): { path: string; lexicalPath: string; close(): void } | null {
  const directories = segments.slice(0, -1);
  if (typeof root === "string" && directories.length === 0) {
    return { path: root, lexicalPath: root, close() {} };
  }
  // The root on its own first: a root that is a file is the caller's CONFLICT, while a file in
  // the way below it only means that nothing is at the path.
  const top = typeof root === "string" ? openDirectoryBeneath(root, []) : root;
  if (!top) return null;
  try {
    return openDirectoryBeneath(top, directories, {
      ...(options.refusedReason ? { refusedReason: options.refusedReason } : {}),
    });
  } catch (err) {
    if (StowageError.is(err, "CONFLICT")) return null;
    throw err;
  } finally {
    if (top !== root) top.close();
  }
}

/** CONFLICT (`NOT_A_DIRECTORY`) when the caller's root is a file, as `openDirectoryBeneath` says it. */
function assertRootIsDirectory(root: string, cause: unknown): void {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch {
    return;
  }
  if (!isDirectory) {
    throw new StowageError("CONFLICT", `${describeValue(root)} is a file, not a directory`, {
      reason: "NOT_A_DIRECTORY",
      details: { path: root },
      cause,
    });
  }
}

/** Opens the last segment inside `parent` without following a link; null when it is missing. */
async function openLast(
  parent: { path: string; lexicalPath: string },
  name: string,
  rootGiven: boolean,
  options: OpenFileBeneathOptions,
): Promise<FileHandle | null> {
  const lexical = join(parent.lexicalPath, name);
  try {
    return await open(`${parent.path}/${name}`, FILE_NO_FOLLOW);
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT") return null;
    if (errno === "ELOOP") {
      throw symlinkRefused(lexical, {
        ...(options.refusedReason ? { reason: options.refusedReason } : {}),
        cause: err,
      });
    }
    // A Unix socket cannot be opened at all.
    if (errno === "ENXIO") throw notARegularFile(lexical, err);
    if (errno === "ENOTDIR") {
      if (rootGiven) assertRootIsDirectory(parent.path, err);
      return null;
    }
    throw fromSystemError(err, `open ${lexical}`);
  }
}

/**
 * Opens the regular file `root/segments…` for reading without following a symbolic link below
 * `root`, then checks the descriptor itself (its fstat), never a path. `root` is the caller's (a
 * path, where a link is followed: the caller chose it, or a directory already opened so). Every
 * directory is opened relative to the one above it (see {@link openDirectoryBeneath}) and held,
 * and the file is opened inside the last with `O_NOFOLLOW | O_NONBLOCK`: a link planted at any
 * depth, before or during the walk, is refused with FORBIDDEN (reason `SYMLINK_REFUSED`, or
 * `refusedReason`), and a directory swapped for a link after it was opened changes nothing, so
 * what is opened is always beneath the root. Anything but a regular file (a directory, a FIFO, a
 * socket, a device) is FORBIDDEN (reason `NOT_A_REGULAR_FILE`); with `refuseHardLinks`, so is a
 * file with other names (`HARD_LINKED`). A missing file, or a missing directory or a file where a
 * directory of the path should be, gives null; a root that is a file is CONFLICT (reason
 * `NOT_A_DIRECTORY`). Segments are single names, at least one: `..`, `.`, `""` and anything with
 * `/` are INVALID_INPUT.
 *
 * On Linux each step is an openat(2) through `/proc/self/fd`; elsewhere each directory is checked
 * with lstat just before it is used, which leaves a short window between the check and the use.
 * The caller closes `handle`.
 */
export async function openFileBeneath(
  root: string | OpenedDirectory,
  segments: readonly string[],
  options: OpenFileBeneathOptions = {},
): Promise<OpenedFile | null> {
  if (!Array.isArray(segments) || segments.length === 0) {
    throw new StowageError("INVALID_INPUT", "a file below a root needs at least one path segment, its name");
  }
  for (const segment of segments) assertSegment(segment);
  const name = segments.at(-1)!;
  const parent = parentOf(root, segments, options);
  if (!parent) return null;
  let handle: FileHandle | null;
  try {
    handle = await openLast(parent, name, typeof root === "string" && segments.length === 1, options);
  } finally {
    parent.close();
  }
  if (!handle) return null;
  const lexicalPath = join(parent.lexicalPath, name);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notARegularFile(lexicalPath);
    if (options.refuseHardLinks && stats.nlink > 1) {
      throw refusedFile(
        lexicalPath,
        "has other names (hard links): it could be a file from outside the root",
        "HARD_LINKED",
      );
    }
    return { handle, stats, lexicalPath };
  } catch (err) {
    await handle.close().catch(() => {});
    throw fromSystemError(err, `open ${lexicalPath}`);
  }
}
