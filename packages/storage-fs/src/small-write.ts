import { randomBytes } from "node:crypto";
import {
  closeSync,
  fstatSync,
  linkSync,
  lstatSync,
  openSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { link, lstat, rename, rm, unlink } from "node:fs/promises";
import { errnoOf, StowageError } from "@stowage/core";
import { ensureDirectory, TEMP_FILE_PREFIX, type TempFile } from "@stowage/core/fs";
import type { FileIdentity } from "./journal/journal-record.js";

/**
 * Bodies up to this size are written with synchronous system calls (those fsync'd are made
 * durable through the put journal, not by an fsync of their file): a 4 KiB file costs a few
 * microseconds of each of open, write, close and rename, where an asynchronous call costs a
 * thread-pool round trip ten times that. The event loop is held for about as long as a small
 * `JSON.stringify`.
 */
export const SYNC_WRITE_MAX_BYTES = 64 * 1024;

/** The file-system calls a put publishes its temp file with. */
export interface PublishCalls {
  link(existing: string, path: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /** Removes `path` if it is there; never fails. */
  discard(path: string): Promise<void>;
  /** True when a regular file (not a link, not a directory) is at `path`; never fails. */
  isFile(path: string): Promise<boolean>;
}

export const asyncCalls: PublishCalls = {
  link,
  unlink,
  rename,
  discard: (path) => rm(path, { force: true }).catch(() => {}),
  isFile: async (path) => (await lstat(path).catch(() => undefined))?.isFile() === true,
};

export const syncCalls: PublishCalls = {
  link: async (existing, path) => linkSync(existing, path),
  unlink: async (path) => unlinkSync(path),
  rename: async (from, to) => renameSync(from, to),
  discard: async (path) => {
    try {
      rmSync(path, { force: true });
    } catch {
      // Best effort, like the asynchronous one: a leftover temp file is swept later.
    }
  },
  isFile: async (path) => {
    try {
      return lstatSync(path, { throwIfNoEntry: false })?.isFile() === true;
    } catch {
      return false;
    }
  },
};

/**
 * Temp file names of this process: a random part drawn once, then a counter. Asking the CSPRNG
 * for every put cost about a tenth of a small put; the random part keeps names of processes
 * sharing a directory apart, and the exclusive create refuses a name that is taken anyway.
 */
const processTempPrefix = `${TEMP_FILE_PREFIX}${randomBytes(8).toString("hex")}-`;
let tempCounter = 0;

/** A small temp file; with its identity when asked for (a journaled put records it). */
export interface SmallTempFile extends TempFile {
  identity?: FileIdentity;
}

/**
 * Writes a small body to a new temp file in `directory` with synchronous calls, not fsync'd; on
 * failure nothing is left behind. The directory is made only when the write finds it missing
 * (the root, on the first put), as `writeTempFile` does. With `identify`, the file's inode and
 * birth time are read from its descriptor before it is closed.
 */
export async function writeSmallTempFile(
  directory: string,
  body: Uint8Array,
  identify = false,
): Promise<SmallTempFile> {
  const path = `${directory}/${processTempPrefix}${(tempCounter++).toString(36)}`;
  const create = () => (identify ? writeIdentified(path, body) : writeFileSync(path, body, WRITE_NEW));
  let identity: FileIdentity | undefined;
  try {
    try {
      identity = create() ?? undefined;
    } catch (err) {
      if (errnoOf(err) !== "ENOENT") throw err;
      await ensureDirectory(directory);
      identity = create() ?? undefined;
    }
  } catch (err) {
    await syncCalls.discard(path);
    if (errnoOf(err) === "ENOTDIR") {
      throw new StowageError("CONFLICT", `a parent of ${path} is a file, not a directory`, { cause: err });
    }
    throw err;
  }
  return { path, size: body.byteLength, identity };
}

const WRITE_NEW = { flag: "wx", mode: 0o644 } as const;

function writeIdentified(path: string, body: Uint8Array): FileIdentity {
  const fd = openSync(path, WRITE_NEW.flag, WRITE_NEW.mode);
  try {
    writeFileSync(fd, body);
    const { ino, birthtimeNs } = fstatSync(fd, { bigint: true });
    return { ino, birthtimeNs };
  } finally {
    closeSync(fd);
  }
}
