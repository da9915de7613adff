import { constants, type Stats } from "node:fs";
import { type FileHandle, lstat, open } from "node:fs/promises";
import { errnoOf } from "@stowage/core";
import { symlinkRefused } from "@stowage/core/fs";
import type { DirectorySnapshots } from "./directory-snapshot.js";
import type { PutJournal } from "./journal/put-journal.js";
import type { KeyLocation, KeyPaths } from "./key-path.js";

/**
 * What every operation of one fs store works with: where its keys live, whether it fsyncs, the
 * directory fsync its puts share, its put journal and its listings' snapshots. The store's
 * functions (`fs-put.ts`, `fs-read.ts`, `fs-move.ts`, `fs-list.ts`) take it first;
 * `createFsObjectStore` makes it once.
 */
export interface FsContext {
  readonly paths: KeyPaths;
  /** fsync each file and its directory before a put or move returns. */
  readonly fsync: boolean;
  /**
   * fsyncs a directory by the path the root spells; concurrent puts into one directory share one
   * (group commit). An fsync neither reads nor writes content, so a directory swapped for a link
   * in between costs at most that rename's durability.
   */
  readonly syncDirectory: (path: string) => Promise<void>;
  readonly snapshots: DirectorySnapshots;
  /** Where small fsync'd puts make their bodies durable (group commit); none without fsync. */
  readonly journal: PutJournal | undefined;
}

/**
 * Open flags of a file read below the root: never through a symbolic link, and never blocking on
 * a FIFO planted there (opened without O_NONBLOCK, it waits for a writer forever and holds one of
 * libuv's four threads; four of them stop every file operation of the process).
 */
export const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const MISSING = new Set(["ENOENT", "ENOTDIR"]);
/** What opening or reading something other than a regular file fails with: a directory, a Unix socket, a FIFO with a writer. */
export const NOT_A_FILE_ERRNOS = new Set(["EISDIR", "ENXIO", "EAGAIN"]);
export const isMissing = (err: unknown) => MISSING.has(errnoOf(err) ?? "");

/** Runs `use` with the directory of `key` open (created with `create`); null when it is missing. */
export async function withLocation<T>(
  context: FsContext,
  key: string,
  create: boolean,
  use: (location: KeyLocation, file: string) => Promise<T>,
): Promise<T | null> {
  const location = context.paths.locate(key, create);
  if (!location) return null;
  try {
    return await use(location, `${location.directory.path}/${location.name}`);
  } finally {
    location.directory.close();
  }
}

/** The file at `path` (never followed if it is a link): its stat, or undefined when absent. */
export async function fileInfo(path: string, lexical: string): Promise<Stats | undefined> {
  let info: Stats;
  try {
    info = await lstat(path);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
  if (info.isSymbolicLink()) throw symlinkRefused(lexical);
  return info;
}

/** Opens a file for reading without following a link; null when it is absent or not a regular file. */
export async function openForRead(path: string, lexical: string): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, READ_NO_FOLLOW);
  } catch (err) {
    if (isMissing(err) || NOT_A_FILE_ERRNOS.has(errnoOf(err) ?? "")) return null;
    if (errnoOf(err) === "ELOOP") throw symlinkRefused(lexical, { cause: err });
    throw err;
  }
  try {
    if ((await handle.stat()).isFile()) return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
  await handle.close();
  return null;
}
