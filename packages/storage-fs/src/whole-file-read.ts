import { closeSync, fstatSync, openSync, read } from "node:fs";
import { errnoOf } from "@stowage/core";
import { symlinkRefused } from "@stowage/core/fs";
import { isMissing, NOT_A_FILE_ERRNOS, READ_NO_FOLLOW } from "./fs-context.js";

/** One `read(2)` through the thread pool, into `buffer` from `offset`, at `position` of the file. */
function readAt(fd: number, buffer: Uint8Array, offset: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    read(fd, buffer, offset, buffer.byteLength - offset, position, (err, bytesRead) =>
      err ? reject(err) : resolve(bytesRead),
    );
  });
}

/**
 * The bytes of the regular file at `path`; null when nothing is there or it is not a regular file
 * (a directory, a FIFO, a socket). Never follows a link at `path` (FORBIDDEN, named `lexical`)
 * and never waits on a FIFO (opened with `O_NONBLOCK`, then refused by its type).
 *
 * Why not `readFile`: it makes four thread-pool round trips (open, fstat, read, close), each ten
 * times what the call costs on a cached inode. Here open, fstat and close are synchronous, like
 * the directory opens before them (a few microseconds each, the event loop held no longer), and
 * only the read, the one call that may wait on the disk, goes through the pool: one round trip.
 * As with `readFile`, a file that grows while read is read up to the size it had when opened.
 */
export async function readWholeFile(path: string, lexical: string): Promise<Uint8Array | null> {
  let fd: number;
  try {
    fd = openSync(path, READ_NO_FOLLOW);
  } catch (err) {
    if (isMissing(err) || NOT_A_FILE_ERRNOS.has(errnoOf(err) ?? "")) return null;
    if (errnoOf(err) === "ELOOP") throw symlinkRefused(lexical, { cause: err });
    throw err;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return null;
    const bytes = new Uint8Array(info.size);
    let filled = 0;
    while (filled < bytes.byteLength) {
      const bytesRead = await readAt(fd, bytes, filled, filled);
      if (bytesRead === 0) return bytes.subarray(0, filled);
      filled += bytesRead;
    }
    return bytes;
  } finally {
    closeSync(fd);
  }
}
