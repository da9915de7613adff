import type { FileHandle } from "node:fs/promises";
import { StowageError } from "@stowage/core";
import { type OpenedFile, openFileBeneath } from "@stowage/core/fs";

/** A regular file open for reading, with its size when it was opened (a hint: a writer may still be growing it). */
export interface OpenedRegularFile {
  handle: FileHandle;
  size: number;
}

/**
 * Opens the regular file `name` of the artifacts directory `dir` (held open: see
 * `directoryAccess`) for reading, with core's `openFileBeneath`: a symbolic link planted there is
 * refused, never followed out of it, and a FIFO is opened without waiting for a writer, then
 * refused. Null when it does not exist. A link, FIFO, socket, device or directory is FORBIDDEN
 * (reason `NOT_A_REGULAR_FILE`), said about `what` (`artifact 3`), never a path.
 */
export async function openRegularFile(
  dir: string,
  name: string,
  what: string,
): Promise<OpenedRegularFile | null> {
  let opened: OpenedFile | null;
  try {
    opened = await openFileBeneath(dir, [name]);
  } catch (err) {
    if (StowageError.is(err, "FORBIDDEN") && err.reason === "SYMLINK_REFUSED") {
      throw new StowageError(
        "FORBIDDEN",
        `${what} is a symbolic link; links are not followed, so reads stay inside the session directory`,
        { cause: err, reason: "NOT_A_REGULAR_FILE" },
      );
    }
    if (StowageError.is(err, "FORBIDDEN") && err.reason === "NOT_A_REGULAR_FILE") {
      throw new StowageError("FORBIDDEN", `${what} is not a regular file`, {
        cause: err,
        reason: "NOT_A_REGULAR_FILE",
      });
    }
    throw err;
  }
  return opened && { handle: opened.handle, size: opened.stats.size };
}
