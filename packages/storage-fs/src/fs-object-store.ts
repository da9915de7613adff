import { constants } from "node:fs";
import { link, lstat, open, readFile, rename, rm, stat, unlink, utimes } from "node:fs/promises";
import { dirname } from "node:path";
import {
  assertSafeKey,
  defineObjectStore,
  describeValue,
  errnoOf,
  type ListItem,
  type ObjectStore,
  type ObjectStoreDriver,
  StowageError,
} from "@stowage/core";
import { createDirectorySync, ensureDirectory, writeTempFile } from "@stowage/core/fs";
import { createDirectTransfer, type FsDirectUrlOptions } from "./direct/direct-transfer.js";
import { fileHandleToStream } from "./file-stream.js";
import { createKeyPaths } from "./key-path.js";
import { walkSorted } from "./sorted-walk.js";

export interface FsObjectStoreOptions {
  /** Directory holding the objects; created on first write. Relative paths resolve against the cwd. */
  root: string;
  /** fsync each file and its directory before a put or move returns. Default `true`. */
  fsync?: boolean;
  /** Enables signed direct upload/download URLs, served by your app with `handleDirectRequest`. */
  directUrls?: FsDirectUrlOptions;
}

export interface FsObjectStore extends ObjectStore {
  /** Absolute path of the root directory. */
  readonly root: string;
  /** The file a key is stored at (validates the key). */
  pathFor(key: string): string;
  /** Removes temp files of writes that never finished (a crashed process); returns how many. */
  removeStaleTempFiles(options?: { olderThanMs?: number; signal?: AbortSignal }): Promise<number>;
  /**
   * With `directUrls`: serves a signed URL (a `Request` in, a `Response` out; mount it at
   * `directUrls.baseUrl`). Uploads are verified against the signed size, type and SHA-256 while
   * they stream, and nothing is stored unless they match.
   */
  handleDirectRequest?(request: Request): Promise<Response>;
}

/** Age after which `removeStaleTempFiles` treats an in-progress write as abandoned. */
export const DEFAULT_STALE_TEMP_FILE_MS = 60 * 60 * 1000;

const MISSING = new Set(["ENOENT", "ENOTDIR"]);
const isMissing = (err: unknown) => MISSING.has(errnoOf(err) ?? "");

async function isFile(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isFile();
  } catch (err) {
    if (isMissing(err)) return false;
    throw err;
  }
}

/** An ObjectStore over a directory: one file per key, written atomically. */
export function createFsObjectStore(options: FsObjectStoreOptions): FsObjectStore {
  if (typeof options?.root !== "string" || options.root.length === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `createFsObjectStore: root must be a non-empty path, got ${describeValue(options?.root)}`,
    );
  }
  if (options.fsync !== undefined && typeof options.fsync !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `createFsObjectStore: fsync must be a boolean, got ${describeValue(options.fsync)}`,
    );
  }
  const fsync = options.fsync ?? true;
  // Concurrent puts into one directory share a directory fsync (group commit).
  const syncDirectory = createDirectorySync();
  const paths = createKeyPaths(options.root);
  const { pathFor } = paths;

  async function statItem(key: string, path: string): Promise<ListItem | undefined> {
    try {
      const info = await stat(path);
      return info.isFile() ? { key, size: info.size, lastModified: info.mtime } : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined; // deleted between the directory read and the stat
      throw err;
    }
  }

  const driver: ObjectStoreDriver = {
    name: "fs",
    atomicCreateOnly: true,
    keepsContentType: false,

    async put(key, body, { ifNoneMatch, signal }) {
      const path = pathFor(key);
      const directory = dirname(path);
      const temp = await writeTempFile(directory, body, { fsync, signal });
      let created: boolean;
      try {
        if (ifNoneMatch === "*") {
          // link() fails if the target exists: an atomic create-only publish, unlike rename().
          try {
            await link(temp.path, path);
          } catch (err) {
            if (errnoOf(err) === "EEXIST") {
              throw new StowageError("ALREADY_EXISTS", `fs put: ${describeValue(key)} already exists`, {
                cause: err,
              });
            }
            throw err;
          }
          created = true;
          await unlink(temp.path);
        } else {
          created = !(await isFile(path));
          await rename(temp.path, path);
        }
      } catch (err) {
        await rm(temp.path, { force: true }).catch(() => {});
        if (errnoOf(err) === "EISDIR" || errnoOf(err) === "EEXIST") {
          throw new StowageError("CONFLICT", `fs put: ${describeValue(key)} is a directory of other keys`, {
            cause: err,
          });
        }
        throw err;
      }
      if (fsync) await syncDirectory(directory);
      return { key, size: temp.size, created };
    },

    async get(key) {
      try {
        const buffer = await readFile(pathFor(key));
        return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
      } catch (err) {
        if (isMissing(err) || errnoOf(err) === "EISDIR") return null;
        throw err;
      }
    },

    async stream(key) {
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(pathFor(key), constants.O_RDONLY);
      } catch (err) {
        if (isMissing(err)) return null;
        throw err;
      }
      const info = await handle.stat().catch(async (err: unknown) => {
        await handle.close();
        throw err;
      });
      if (!info.isFile()) {
        await handle.close();
        return null;
      }
      return fileHandleToStream(handle, `fs stream ${describeValue(key)}`);
    },

    async head(key) {
      const item = await statItem(key, pathFor(key));
      return item ? { size: item.size, lastModified: item.lastModified } : null;
    },

    async delete(key) {
      try {
        await unlink(pathFor(key));
      } catch (err) {
        // A directory at the key holds other keys; it is not an object, so there is nothing to delete.
        if (isMissing(err) || errnoOf(err) === "EISDIR") return;
        throw err;
      }
    },

    async list({ prefix, cursor, limit, signal }) {
      const items: ListItem[] = [];
      const files = walkSorted({
        start: paths.directoryForPrefix(prefix),
        prefix,
        startAfter: cursor,
        signal,
      });
      let more = false;
      for await (const file of files) {
        if (items.length === limit) {
          more = true;
          break;
        }
        const item = await statItem(file.key, file.path);
        if (item) items.push(item);
      }
      return { items, cursor: more ? items[items.length - 1]!.key : undefined };
    },

    async *iterate({ prefix, signal }) {
      for await (const file of walkSorted({ start: paths.directoryForPrefix(prefix), prefix, signal })) {
        const item = await statItem(file.key, file.path);
        if (item) yield item;
      }
    },

    async move(from, to, { ifNoneMatch }) {
      const fromPath = pathFor(from);
      const toPath = pathFor(to);
      // Only a file is an object; renaming a directory would move a whole subtree of keys.
      if (!(await isFile(fromPath))) {
        throw new StowageError("NOT_FOUND", `fs move: ${describeValue(from)} does not exist`);
      }
      const toDirectory = dirname(toPath);
      await ensureDirectory(toDirectory);
      let created = true;
      try {
        if (ifNoneMatch === "*") {
          await link(fromPath, toPath);
          await unlink(fromPath);
        } else {
          created = !(await isFile(toPath));
          await rename(fromPath, toPath);
        }
      } catch (err) {
        const errno = errnoOf(err);
        if (errno === "EEXIST" && ifNoneMatch === "*" && (await isFile(toPath))) {
          throw new StowageError("ALREADY_EXISTS", `fs move: ${describeValue(to)} already exists`, {
            cause: err,
          });
        }
        if (errno === "ENOENT")
          throw new StowageError("NOT_FOUND", `fs move: ${describeValue(from)} does not exist`);
        if (errno === "EEXIST" || errno === "EISDIR") {
          throw new StowageError("CONFLICT", `fs move: ${describeValue(to)} is a directory of other keys`, {
            cause: err,
          });
        }
        throw err;
      }
      if (fsync) {
        await syncDirectory(toDirectory);
        if (dirname(fromPath) !== toDirectory) await syncDirectory(dirname(fromPath));
      }
      const info = await stat(toPath);
      return { key: to, size: info.size, created };
    },

    async touch(key) {
      const path = pathFor(key);
      if (!(await isFile(path))) return false;
      const now = new Date();
      try {
        await utimes(path, now, now);
        return true;
      } catch (err) {
        if (isMissing(err)) return false;
        throw err;
      }
    },
  };

  let store = defineObjectStore(driver);
  const transfer = options.directUrls ? createDirectTransfer(store, options.directUrls) : undefined;
  if (transfer) {
    store = defineObjectStore({
      ...driver,
      createUploadUrl: (request) => transfer.createUploadUrl(request),
      createDownloadUrl: (request) => transfer.createDownloadUrl(request),
    });
  }

  async function removeStaleTempFiles(
    sweep: { olderThanMs?: number; signal?: AbortSignal } = {},
  ): Promise<number> {
    const cutoff = Date.now() - (sweep.olderThanMs ?? DEFAULT_STALE_TEMP_FILE_MS);
    let removed = 0;
    const start = { path: paths.rootPath, key: "" };
    for await (const file of walkSorted({ start, prefix: "", yields: "temp-files", signal: sweep.signal })) {
      try {
        if ((await stat(file.path)).mtimeMs <= cutoff) {
          await unlink(file.path);
          removed++;
        }
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    }
    return removed;
  }

  return Object.freeze({
    ...store,
    root: paths.rootPath,
    pathFor(key: string) {
      assertSafeKey(key);
      return pathFor(key);
    },
    removeStaleTempFiles,
    ...(transfer ? { handleDirectRequest: transfer.handleDirectRequest } : {}),
  });
}
