import { rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { fromSystemError } from "../system-errors.js";
import { fsyncDirectory, writeTempFile } from "./temp-file.js";

export interface WriteFileAtomicOptions {
  /** fsync the file and its directory before returning. Default true. */
  fsync?: boolean;
  signal?: AbortSignal;
}

/**
 * Replaces `path` with `body` so that a reader sees the old file or the new one, never a part:
 * temp file in the same directory, write, fsync, rename, fsync the directory. The directory is
 * created if missing. Returns the bytes written. Failures are StowageErrors (ENOSPC →
 * STORAGE_FULL, a file where a directory should be → CONFLICT, …).
 */
export async function writeFileAtomic(
  path: string,
  body: Uint8Array | string | ReadableStream<Uint8Array>,
  options: WriteFileAtomicOptions = {},
): Promise<number> {
  const fsync = options.fsync ?? true;
  const directory = dirname(path);
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  try {
    const temp = await writeTempFile(directory, bytes, {
      fsync,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    try {
      await rename(temp.path, path);
    } catch (err) {
      await rm(temp.path, { force: true }).catch(() => {});
      throw err;
    }
    if (fsync) await fsyncDirectory(directory);
    return temp.size;
  } catch (err) {
    throw fromSystemError(err, `write ${path}`);
  }
}
