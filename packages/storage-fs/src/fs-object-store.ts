import { constants, type Stats } from "node:fs";
import {
  type FileHandle,
  link,
  lstat,
  lutimes,
  open,
  readFile,
  rename,
  unlink,
  utimes,
} from "node:fs/promises";
import { pathToFileURL } from "node:url";
import {
  defineObjectStore,
  describeValue,
  errnoOf,
  type ListItem,
  type ObjectStore,
  type ObjectStoreDriver,
  StowageError,
} from "@stowage/core";
import { createDirectorySync, symlinkRefused, writeTempFile } from "@stowage/core/fs";
import { createDirectTransfer, type FsDirectUrlOptions } from "./direct/direct-transfer.js";
import { createDirectorySnapshots } from "./directory-snapshot.js";
import { statEntries } from "./file-stats.js";
import { fileHandleToStream } from "./file-stream.js";
import { createKeyPaths, type KeyLocation } from "./key-path.js";
import { asyncCalls, SYNC_WRITE_MAX_BYTES, syncCalls, writeSmallTempFile } from "./small-write.js";
import { type WalkedBatch, type WalkOptions, walkSorted } from "./sorted-walk.js";

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
  /** The `file://` URL of the file a key is stored at (validates the key; the file may not exist). */
  uriFor(key: string): string;
  /** Removes temp files of writes that never finished (a crashed process); returns how many. */
  removeStaleTempFiles(options?: { olderThanMs?: number; signal?: AbortSignal }): Promise<number>;
  /**
   * With `directUrls`: serves a signed URL (a `Request` in, a `Response` out; mount it at
   * `directUrls.baseUrl`). Uploads are verified against the signed size, type and SHA-256 while
   * they stream, and nothing is stored unless they match.
   */
  handleDirectRequest?(request: Request): Promise<Response>;
}

/** An fs store made with `directUrls`: its signed-URL methods and their handler are always there. */
export interface FsObjectStoreWithDirectUrls extends FsObjectStore {
  createUploadUrl: NonNullable<ObjectStore["createUploadUrl"]>;
  createDownloadUrl: NonNullable<ObjectStore["createDownloadUrl"]>;
  handleDirectRequest(request: Request): Promise<Response>;
}

/** Age after which `removeStaleTempFiles` treats an in-progress write as abandoned. */
export const DEFAULT_STALE_TEMP_FILE_MS = 60 * 60 * 1000;

/**
 * Open flags of a file read below the root: never through a symbolic link, and never blocking on
 * a FIFO planted there (opened without O_NONBLOCK, it waits for a writer forever and holds one of
 * libuv's four threads; four of them stop every file operation of the process).
 */
const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const MISSING = new Set(["ENOENT", "ENOTDIR"]);
/** What opening or reading something other than a regular file fails with: a directory, a Unix socket, a FIFO with a writer. */
const NOT_A_FILE_ERRNOS = new Set(["EISDIR", "ENXIO", "EAGAIN"]);
const isMissing = (err: unknown) => MISSING.has(errnoOf(err) ?? "");

/** The file at `path` (never followed if it is a link): its stat, or undefined when absent. */
async function fileInfo(path: string, lexical: string): Promise<Stats | undefined> {
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
async function openForRead(path: string, lexical: string): Promise<FileHandle | null> {
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

/**
 * An ObjectStore over a directory: one file per key, written atomically. With `directUrls`, the
 * returned type says that `createUploadUrl`, `createDownloadUrl` and `handleDirectRequest` exist.
 */
export function createFsObjectStore(
  options: FsObjectStoreOptions & { directUrls: FsDirectUrlOptions },
): FsObjectStoreWithDirectUrls;
export function createFsObjectStore(options: FsObjectStoreOptions): FsObjectStore;
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
  // Concurrent puts into one directory share a directory fsync (group commit). It is keyed and
  // opened by the directory's path as the root spells it: an fsync neither reads nor writes
  // content, so a directory swapped for a link in between costs at most that rename's durability.
  const syncDirectory = createDirectorySync();
  const paths = createKeyPaths(options.root);

  /** Runs `use` with the directory of `key` open (created with `create`); null when it is missing. */
  async function withLocation<T>(
    key: string,
    create: boolean,
    use: (location: KeyLocation, file: string) => Promise<T>,
  ): Promise<T | null> {
    const location = paths.locate(key, create);
    if (!location) return null;
    try {
      return await use(location, `${location.directory.path}/${location.name}`);
    } finally {
      location.directory.close();
    }
  }

  const snapshots = createDirectorySnapshots();

  /** The batch's files as list items, in order; a file deleted since the directory was read is left out. */
  async function itemsOf(batch: WalkedBatch): Promise<ListItem[]> {
    const stats = await statEntries(batch.directoryPath, batch.files);
    const items: ListItem[] = [];
    for (let i = 0; i < stats.length; i++) {
      const stat = stats[i];
      if (stat) {
        items.push({
          key: batch.directoryKey + batch.files[i]!.name,
          size: stat.size,
          // Rounded as Node's `Stats.mtime` is (what `head` returns): `new Date` alone truncates the
          // fraction, and a listing 1 ms off `head` reads as "touched" to garbage collection.
          lastModified: new Date(Math.round(stat.mtimeMs)),
        });
      }
    }
    return items;
  }

  /** Walks the files under a listing prefix; nothing when its directory does not exist. */
  async function* walkPrefix(prefix: string, walk: Omit<WalkOptions, "start" | "prefix" | "snapshots">) {
    const start = paths.directoryForPrefix(prefix);
    const directory = paths.openDirectoryOf(start.segments, false);
    if (!directory) return;
    try {
      yield* walkSorted({ ...walk, snapshots, prefix, start: { directory, key: start.key } });
    } finally {
      directory.close();
    }
  }

  const driver: ObjectStoreDriver = {
    name: "fs",
    atomicCreateOnly: true,
    keepsContentType: false,
    // The signed handler hashes an upload while it streams and stores nothing that differs.
    directUploadVerifiesSha256: true,
    // rename and link keep the inode, so its mtime.
    moveKeepsLastModified: true,

    async put(key, body, { ifNoneMatch, signal }) {
      const stored = await withLocation(key, true, async (location, path) => {
        const small = !fsync && body instanceof Uint8Array && body.byteLength <= SYNC_WRITE_MAX_BYTES;
        const calls = small ? syncCalls : asyncCalls;
        // Whether the key is a file already (the result's `created`): asked on the thread pool
        // while a large body is written (one round trip off the put's path), and synchronously
        // just before the rename of a small one (no round trip at all). Either way before the
        // rename; a concurrent writer can race it either way.
        const existed = ifNoneMatch === "*" || small ? undefined : calls.isFile(path);
        const temp = small
          ? await writeSmallTempFile(location.directory.path, body)
          : await writeTempFile(location.directory.path, body, { fsync, signal });
        let created: boolean;
        try {
          if (ifNoneMatch === "*") {
            // link() fails if the target exists: an atomic create-only publish, unlike rename().
            try {
              await calls.link(temp.path, path);
            } catch (err) {
              if (errnoOf(err) === "EEXIST") {
                throw new StowageError("ALREADY_EXISTS", `fs put: ${describeValue(key)} already exists`, {
                  cause: err,
                });
              }
              throw err;
            }
            created = true;
            await calls.unlink(temp.path);
          } else {
            // rename() replaces a link planted at the key; it never writes through it.
            created = !(await (existed ?? calls.isFile(path)));
            await calls.rename(temp.path, path);
          }
        } catch (err) {
          await calls.discard(temp.path);
          if (errnoOf(err) === "EISDIR" || errnoOf(err) === "EEXIST") {
            throw new StowageError("CONFLICT", `fs put: ${describeValue(key)} is a directory of other keys`, {
              cause: err,
            });
          }
          throw err;
        }
        return { size: temp.size, created, directory: location.lexicalDirectory };
      });
      if (!stored)
        throw new StowageError("UNAVAILABLE", `fs put: the directory of ${describeValue(key)} vanished`);
      if (fsync) await syncDirectory(stored.directory);
      return { key, size: stored.size, created: stored.created };
    },

    async get(key) {
      return withLocation(key, false, async (location, path) => {
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
    },

    async stream(key) {
      const handle = await withLocation(key, false, (location, path) => openForRead(path, location.lexical));
      return handle ? fileHandleToStream(handle) : null;
    },

    async head(key) {
      return withLocation(key, false, async (location, path) => {
        const info = await fileInfo(path, location.lexical);
        return info?.isFile() ? { size: info.size, lastModified: info.mtime } : null;
      });
    },

    async delete(key) {
      await withLocation(key, false, async (_location, path) => {
        try {
          // unlink() removes a link itself, never what it points at.
          await unlink(path);
        } catch (err) {
          // A directory at the key holds other keys; it is not an object, so there is nothing to delete.
          if (isMissing(err) || errnoOf(err) === "EISDIR") return;
          throw err;
        }
      });
    },

    async list({ prefix, cursor, limit, signal }) {
      const items: ListItem[] = [];
      let more = false;
      // Batches no larger than what the page still needs (plus one to know whether more follow),
      // so a page stats about its own files, however large the directory.
      const walk = walkPrefix(prefix, { startAfter: cursor, signal, batchSize: Math.min(limit + 1, 256) });
      pages: for await (const batch of walk) {
        for (let offset = 0; offset < batch.files.length; ) {
          if (items.length === limit) {
            more = true;
            break pages;
          }
          const files = batch.files.slice(offset, offset + limit - items.length + 1);
          offset += files.length;
          for (const item of await itemsOf({ ...batch, files })) {
            if (items.length === limit) {
              more = true;
              break pages;
            }
            items.push(item);
          }
        }
      }
      return { items, cursor: more ? items[items.length - 1]!.key : undefined };
    },

    async *iterate({ prefix, signal }) {
      for await (const batch of walkPrefix(prefix, { signal })) yield* await itemsOf(batch);
    },

    async move(from, to, { ifNoneMatch }) {
      const notFound = () => new StowageError("NOT_FOUND", `fs move: ${describeValue(from)} does not exist`);
      const moved = await withLocation(from, false, async (source, fromPath) => {
        // Only a file is an object; renaming a directory would move a whole subtree of keys.
        if (!(await fileInfo(fromPath, source.lexical))?.isFile()) throw notFound();
        return withLocation(to, true, async (target, toPath) => {
          let created = true;
          try {
            if (ifNoneMatch === "*") {
              await link(fromPath, toPath);
              await unlink(fromPath);
            } else {
              created = (await lstat(toPath).catch(() => undefined))?.isFile() !== true;
              await rename(fromPath, toPath);
            }
          } catch (err) {
            const errno = errnoOf(err);
            if (errno === "EEXIST" && ifNoneMatch === "*" && (await lstat(toPath).catch(() => undefined))) {
              throw new StowageError("ALREADY_EXISTS", `fs move: ${describeValue(to)} already exists`, {
                cause: err,
              });
            }
            if (errno === "ENOENT") throw notFound();
            if (errno === "EEXIST" || errno === "EISDIR") {
              throw new StowageError(
                "CONFLICT",
                `fs move: ${describeValue(to)} is a directory of other keys`,
                {
                  cause: err,
                },
              );
            }
            throw err;
          }
          const info = await lstat(toPath);
          return {
            size: info.size,
            created,
            directories: [target.lexicalDirectory, source.lexicalDirectory],
          };
        });
      });
      if (!moved) throw notFound();
      if (fsync) {
        const [toDirectory, fromDirectory] = moved.directories;
        await syncDirectory(toDirectory!);
        if (fromDirectory !== toDirectory) await syncDirectory(fromDirectory!);
      }
      return { key: to, size: moved.size, created: moved.created };
    },

    uriFor: (key) => pathToFileURL(paths.pathFor(key)).href,

    async touch(key) {
      const touched = await withLocation(key, false, async (location, path) => {
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
    },
  };

  let store = defineObjectStore(driver);
  const transfer = options.directUrls
    ? createDirectTransfer(store, options.directUrls, paths.rootPath)
    : undefined;
  if (transfer) {
    store = defineObjectStore({
      ...driver,
      // A key the store refuses (a reserved temp-file segment) is refused when signing too, not
      // by the upload the URL was handed out for.
      createUploadUrl: async (request) => {
        paths.pathFor(request.key);
        return transfer.createUploadUrl(request);
      },
      createDownloadUrl: async (request) => {
        paths.pathFor(request.key);
        return transfer.createDownloadUrl(request);
      },
    });
  }

  async function removeStaleTempFiles(
    sweep: { olderThanMs?: number; signal?: AbortSignal } = {},
  ): Promise<number> {
    const cutoff = Date.now() - (sweep.olderThanMs ?? DEFAULT_STALE_TEMP_FILE_MS);
    let removed = 0;
    for await (const batch of walkPrefix("", { yields: "temp-files", signal: sweep.signal })) {
      for (const file of batch.files) {
        const path = `${batch.directoryPath}/${file.name}`;
        try {
          // Read afresh: a snapshot's stat is of a finished file, a temp file's time moves.
          if ((await lstat(path)).mtimeMs <= cutoff) {
            await unlink(path);
            removed++;
          }
        } catch (err) {
          if (!isMissing(err)) throw err;
        }
      }
    }
    return removed;
  }

  return Object.freeze({
    ...store,
    // Always set (the driver has it); restated because ObjectStore declares it optional.
    uriFor: store.uriFor!,
    root: paths.rootPath,
    removeStaleTempFiles,
    ...(transfer ? { handleDirectRequest: transfer.handleDirectRequest } : {}),
  });
}
