import { lutimes, readFile, unlink, utimes } from "node:fs/promises";
import { errnoOf, type ObjectInfo } from "@stowage/core";
import { symlinkRefused } from "@stowage/core/fs";
import { fileHandleToStream } from "./file-stream.js";
import {
  type FsContext,
  fileInfo,
  isMissing,
  NOT_A_FILE_ERRNOS,
  openForRead,
  READ_NO_FOLLOW,
  withLocation,
} from "./fs-context.js";

/** The bytes of the regular file at a key; null when there is none. */
export async function getFile(context: FsContext, key: string): Promise<Uint8Array | null> {
  return withLocation(context, key, false, async (location, path) => {
    let buffer: Buffer;
    try {
      // One readFile, as fast as an unchecked one: O_NOFOLLOW refuses a link at the key, and
      // O_NONBLOCK makes a FIFO read at once (empty without a writer, EAGAIN with one).
      buffer = await readFile(path, { flag: READ_NO_FOLLOW });
    } catch (err) {
      if (isMissing(err) || NOT_A_FILE_ERRNOS.has(errnoOf(err) ?? "")) return null;
      if (errnoOf(err) === "ELOOP") throw symlinkRefused(location.lexical, { cause: err });
      throw err;
    }
    // Only a regular file is an object. Whatever else reads at once reads empty: checked then
    // only, so a FIFO planted at the key is absent, as head() says, not an empty object.
    if (buffer.byteLength === 0 && !(await fileInfo(path, location.lexical))?.isFile()) return null;
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  });
}

export async function streamFile(
  context: FsContext,
  key: string,
): Promise<ReadableStream<Uint8Array> | null> {
  const handle = await withLocation(context, key, false, (location, path) =>
    openForRead(path, location.lexical),
  );
  return handle ? fileHandleToStream(handle) : null;
}

export async function headFile(context: FsContext, key: string): Promise<ObjectInfo | null> {
  return withLocation(context, key, false, async (location, path) => {
    const info = await fileInfo(path, location.lexical);
    return info?.isFile() ? { size: info.size, lastModified: info.mtime } : null;
  });
}

export async function deleteFile(context: FsContext, key: string): Promise<void> {
  await withLocation(context, key, false, async (_location, path) => {
    try {
      // unlink() removes a link itself, never what it points at.
      await unlink(path);
    } catch (err) {
      // A directory at the key holds other keys; it is not an object, so there is nothing to delete.
      if (isMissing(err) || errnoOf(err) === "EISDIR") return;
      throw err;
    }
  });
}

/** Sets the file's modification time to now; false when there is no file at the key. */
export async function touchFile(context: FsContext, key: string): Promise<boolean> {
  const touched = await withLocation(context, key, false, async (location, path) => {
    if (!(await fileInfo(path, location.lexical))?.isFile()) return false;
    const now = new Date();
    try {
      // lutimes never follows: a file swapped for a link since the look only touches the link.
      await lutimes(path, now, now);
    } catch (err) {
      if (isMissing(err)) return false;
      throw err;
    }
    // Changing the directory's times tells listings in every process that their snapshot
    // of it (sizes and times included) is out of date: see directory-snapshot.ts.
    await utimes(location.directory.path, now, now).catch(() => {});
    return true;
  });
  return touched === true;
}
