import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open, realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { describeValue, fromSystemError, StowageError } from "@stowage/core";

/** A file of the root, opened and checked: a regular file with no other name, inside the root. */
export interface OpenedInsideRoot {
  handle: FileHandle;
  /** Its real path (every link resolved) when it was checked. */
  realPath: string;
  size: number;
}

/** Test seam: runs between the checks of the path and the open, where a swap would strike. */
export interface OpenInsideRootHooks {
  beforeOpen?: () => Promise<void>;
}

// O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer, forever, holding a thread
// of libuv's pool; with it the open returns and the descriptor's fstat refuses it.
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

function forbidden(filePath: string, what: string, reason: string): StowageError {
  return new StowageError("FORBIDDEN", `${describeValue(filePath)} ${what}`, { reason });
}

/** A failed system call about `filePath`, its code kept and the absolute path it named left out. */
function unreachable(err: unknown, filePath: string): StowageError {
  const mapped = fromSystemError(err, "upload");
  if (mapped.code === "ABORTED" || mapped.reason === undefined) return mapped;
  const what = mapped.code === "NOT_FOUND" ? "does not exist" : `cannot be read (${mapped.reason})`;
  return new StowageError(mapped.code, `${describeValue(filePath)} ${what}`, {
    reason: mapped.reason,
    cause: err,
  });
}

function isInside(root: string, path: string): boolean {
  const inside = relative(root, path);
  return inside !== "" && inside !== ".." && !inside.startsWith(`..${sep}`) && !isAbsolute(inside);
}

/** FORBIDDEN unless `info` is a regular file with one name (a hard link could be a host file's other name). */
function checkRegular(filePath: string, info: Stats): void {
  if (!info.isFile()) throw forbidden(filePath, "is not a regular file", "NOT_A_REGULAR_FILE");
  if (info.nlink > 1) {
    throw forbidden(
      filePath,
      "has other names (hard links): it could be a file from outside the upload root",
      "HARD_LINKED",
    );
  }
}

/**
 * Opens `filePath` (absolute, or relative to `root`) for reading when it is a regular file inside
 * `root`, links resolved: anything else is FORBIDDEN. The root is a workspace the model (or the
 * agent it drives) chooses paths in and can change meanwhile, so this is safe against that:
 * - the path is resolved (`realpath`) and must stay inside the root (`OUTSIDE_ROOT`);
 * - it must be a regular file before it is opened (a FIFO would block the open: `NOT_A_REGULAR_FILE`)
 *   and have no other name (`HARD_LINKED`: `realpath` cannot see where a hard link points);
 * - the open follows no link and does not block, and the descriptor must be the very file that was
 *   checked (same device and inode): a directory of the path swapped for a link between the check
 *   and the open (`CHANGED_WHILE_OPENED`) opens something else, which is refused.
 */
export async function openInsideRoot(
  root: string,
  filePath: string,
  hooks: OpenInsideRootHooks = {},
): Promise<OpenedInsideRoot> {
  if (filePath.includes("\u0000")) {
    throw new StowageError("INVALID_INPUT", "filePath must not contain NUL", { reason: "INVALID_PATH" });
  }
  const realRoot = await realpath(root).catch((err: unknown) => {
    throw new StowageError("INVALID_INPUT", `root ${describeValue(root)} cannot be resolved`, {
      reason: "INVALID_UPLOAD_ROOT",
      cause: err,
    });
  });
  if (realRoot === sep) throw rootIsFilesystemRoot(root);
  let realPath: string;
  let checked: Stats;
  try {
    realPath = await realpath(resolve(realRoot, filePath));
    checked = await lstat(realPath);
  } catch (err) {
    throw unreachable(err, filePath);
  }
  if (!isInside(realRoot, realPath)) throw forbidden(filePath, "is outside the upload root", "OUTSIDE_ROOT");
  checkRegular(filePath, checked);
  await hooks.beforeOpen?.();
  const handle = await open(realPath, OPEN_FLAGS).catch((err: unknown) => {
    throw unreachable(err, filePath);
  });
  try {
    const opened = await handle.stat();
    checkRegular(filePath, opened);
    if (opened.dev !== checked.dev || opened.ino !== checked.ino) {
      throw forbidden(filePath, "changed while it was opened", "CHANGED_WHILE_OPENED");
    }
    return { handle, realPath, size: opened.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** INVALID_INPUT: an upload root of `/` lets the tool read the whole host. */
export function rootIsFilesystemRoot(root: string): StowageError {
  return new StowageError(
    "INVALID_INPUT",
    `root ${describeValue(root)} is the file system's root: give the agent's workspace`,
    { reason: "INVALID_UPLOAD_ROOT" },
  );
}
