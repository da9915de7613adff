import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { errnoOf, fromSystemError, StowageError } from "@stowage/core";

// O_NOFOLLOW: a symbolic link planted in the session directory is refused, never followed out of
// it. O_NONBLOCK: opening a FIFO planted there returns at once instead of hanging the reader.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** A regular file open for reading, with its size when it was opened (a hint: a writer may still be growing it). */
export interface OpenedRegularFile {
  handle: FileHandle;
  size: number;
}

/**
 * Opens a regular file for reading without following a symbolic link in its last component;
 * null when it does not exist. A link, FIFO, device or directory is FORBIDDEN (reason
 * `NOT_A_REGULAR_FILE`).
 */
export async function openRegularFile(path: string, what: string): Promise<OpenedRegularFile | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, READ_FLAGS);
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "ENOENT" || errno === "ENOTDIR") return null;
    if (errno === "ELOOP") {
      throw new StowageError(
        "FORBIDDEN",
        `${what} is a symbolic link; links are not followed, so reads stay inside the session directory`,
        { cause: err, reason: "NOT_A_REGULAR_FILE" },
      );
    }
    throw fromSystemError(err, `open ${what}`);
  }
  try {
    const info = await handle.stat();
    if (info.isFile()) return { handle, size: info.size };
  } catch (err) {
    await handle.close().catch(() => {});
    throw fromSystemError(err, `open ${what}`);
  }
  await handle.close().catch(() => {});
  throw new StowageError("FORBIDDEN", `${what} is not a regular file`, { reason: "NOT_A_REGULAR_FILE" });
}
