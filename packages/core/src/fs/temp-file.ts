import { randomBytes } from "node:crypto";
import { closeSync, constants, fsync, openSync } from "node:fs";
import { type FileHandle, mkdir, open, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { abortedError } from "../abort.js";
import { StowageError } from "../errors.js";
import { errnoOf } from "../system-errors.js";

/**
 * Names starting with this are in-progress writes: never objects, never listed, and swept once
 * older than a grace period (a crashed writer leaves one behind).
 */
export const TEMP_FILE_PREFIX = ".stowage-tmp-";

const fsyncAsync = promisify(fsync);

/** Bytes gathered from small stream chunks before one write system call. */
const WRITE_BATCH_BYTES = 256 * 1024;

export interface TempFile {
  path: string;
  size: number;
}

/** Creates `directory` and its parents; CONFLICT when one of them is a file. */
export async function ensureDirectory(directory: string): Promise<void> {
  try {
    await mkdir(directory, { recursive: true });
  } catch (err) {
    const errno = errnoOf(err);
    if (errno === "EEXIST" || errno === "ENOTDIR") {
      throw new StowageError("CONFLICT", `a parent of ${directory} is a file, not a directory`, {
        cause: err,
      });
    }
    throw err;
  }
}

async function openExclusive(path: string): Promise<FileHandle> {
  try {
    return await open(path, "wx", 0o644);
  } catch (err) {
    if (errnoOf(err) === "ENOTDIR") {
      throw new StowageError("CONFLICT", `a parent of ${path} is a file, not a directory`, { cause: err });
    }
    if (errnoOf(err) !== "ENOENT") throw err;
  }
  // The directory is made only when the first open finds it missing: one system call saved per put.
  await ensureDirectory(dirname(path));
  return open(path, "wx", 0o644);
}

async function writeStream(
  handle: FileHandle,
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<number> {
  const reader = body.getReader();
  const cancelOnAbort = () => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  signal?.addEventListener("abort", cancelOnAbort, { once: true });
  let size = 0;
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batchBytes === 0) return;
    await handle.writev(batch);
    batch = [];
    batchBytes = 0;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw abortedError(signal, "write");
      if (done) break;
      if (!(value instanceof Uint8Array))
        throw new StowageError("INVALID_INPUT", "stream chunks must be Uint8Array");
      size += value.byteLength;
      batch.push(value);
      batchBytes += value.byteLength;
      if (batchBytes >= WRITE_BATCH_BYTES) await flush();
    }
    await flush();
    return size;
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    signal?.removeEventListener("abort", cancelOnAbort);
    reader.releaseLock();
  }
}

/**
 * Writes `body` to a new temp file in `directory` (created if missing), fsyncs it when asked, and
 * closes it. On any failure the temp file is removed before the error is rethrown. Publish it
 * with a rename (or a link, for create-only) into the same directory.
 */
export async function writeTempFile(
  directory: string,
  body: Uint8Array | ReadableStream<Uint8Array>,
  options: { fsync: boolean; signal?: AbortSignal },
): Promise<TempFile> {
  const path = join(directory, `${TEMP_FILE_PREFIX}${randomBytes(8).toString("hex")}`);
  const handle = await openExclusive(path);
  try {
    let size: number;
    if (body instanceof Uint8Array) {
      await handle.writeFile(body);
      size = body.byteLength;
    } else {
      size = await writeStream(handle, body, options.signal);
    }
    if (options.fsync) await handle.sync();
    await handle.close();
    return { path, size };
  } catch (err) {
    await handle.close().catch(() => {});
    await rm(path, { force: true }).catch(() => {});
    throw err;
  }
}

/**
 * Makes a rename or link inside `directory` durable. The directory is opened and closed on the
 * calling thread (neither waits on the disk: it was just written to, so its entry is cached);
 * only the fsync goes to the thread pool. Three pool round trips cost a small fsync'd put one at
 * a time about a tenth of its time on a 2-core machine.
 */
export async function fsyncDirectory(directory: string): Promise<void> {
  const fd = openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await fsyncAsync(fd);
  } finally {
    closeSync(fd);
  }
}
