import { lutimes, unlink, utimes } from "node:fs/promises";
import { errnoOf, type ObjectInfo } from "@stowage/core";
import { fileHandleToStream } from "./file-stream.js";
import { type FsContext, fileInfo, isMissing, openForRead, withLocation } from "./fs-context.js";
import { readWholeFile } from "./whole-file-read.js";

/** The bytes of the regular file at a key; null when there is none. */
export async function getFile(context: FsContext, key: string): Promise<Uint8Array | null> {
  return withLocation(context, key, false, (location, path) => readWholeFile(path, location.lexical));
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
