import { pathToFileURL } from "node:url";
import {
  defineObjectStore,
  describeValue,
  type ObjectStore,
  type ObjectStoreDriver,
  StowageError,
} from "@stowage/core";
import { createDirectTransfer, type FsDirectUrlOptions } from "./direct/direct-transfer.js";
import { directUrlsFor, type StoreWithDirectUrls } from "./direct/direct-urls-for.js";
import { createDirectorySnapshots } from "./directory-snapshot.js";
import { createDirectorySync } from "./directory-sync.js";
import type { FsContext } from "./fs-context.js";
import { iterateFileKeys, iterateFiles, listFiles, removeStaleTempFiles } from "./fs-list.js";
import { moveFile } from "./fs-move.js";
import { putFile } from "./fs-put.js";
import { deleteFile, getFile, headFile, streamFile, touchFile } from "./fs-read.js";
import { bootId, recoverJournal } from "./journal/journal-recovery.js";
import { createPutJournal } from "./journal/put-journal.js";
import { afterReady, createRecoveryGate, iterateAfterReady } from "./journal/recovery-gate.js";
import { createKeyPaths } from "./key-path.js";

export interface FsObjectStoreOptions {
  /** Directory holding the objects; created on first write. Relative paths resolve against the cwd. */
  root: string;
  /** fsync each file and its directory before a put or move returns. Default `true`. */
  fsync?: boolean;
  /**
   * With `fsync`, small puts are made durable through the put journal (one flush for many puts
   * in flight; see the README). `false` fsyncs each file itself: no journal directory under the
   * root and no background checkpoint. Default `true`.
   */
  journal?: boolean;
  /** Enables signed direct upload/download URLs, served by your app with `handleDirectRequest`. */
  directUrls?: FsDirectUrlOptions;
}

export interface FsObjectStore extends ObjectStore {
  /** Absolute path of the root directory. */
  readonly root: string;
  /** The `file://` URL of the file a key is stored at (validates the key; the file may not exist). */
  uriFor(key: string): string;
  /**
   * Removes temp files of writes that never finished (a crashed process), older than
   * `olderThanMs` (default 1 hour); returns how many.
   */
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
  /**
   * The same signed URLs (this store's `directUrls`: base, secret, checks) for another store:
   * uploads through them go into `store` and downloads come from it, through this process, e.g.
   * a sealed store on S3, whose bytes must pass through the app to be sealed. Mount the returned
   * store's `handleDirectRequest` at `directUrls.baseUrl` in place of this one's.
   */
  directUrlsFor(store: ObjectStore): StoreWithDirectUrls;
}

function contextFrom(options: FsObjectStoreOptions): FsContext {
  if (typeof options?.root !== "string" || options.root.length === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `createFsObjectStore: root must be a non-empty path, got ${describeValue(options?.root)}`,
    );
  }
  for (const name of ["fsync", "journal"] as const) {
    if (options[name] !== undefined && typeof options[name] !== "boolean") {
      throw new StowageError(
        "INVALID_INPUT",
        `createFsObjectStore: ${name} must be a boolean, got ${describeValue(options[name])}`,
      );
    }
  }
  const paths = createKeyPaths(options.root);
  const fsync = options.fsync ?? true;
  return {
    paths,
    fsync,
    // Concurrent puts into one directory share a directory fsync (group commit).
    syncDirectory: createDirectorySync(),
    snapshots: createDirectorySnapshots(),
    // Concurrent small puts share the journal's fdatasync instead of fsyncing each file.
    journal: fsync && options.journal !== false ? createPutJournal(paths, bootId()) : undefined,
  };
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
  const context = contextFrom(options);
  const { paths } = context;
  // Every store, with fsync or without, first makes whole what a machine crash left in the journal.
  const ready = createRecoveryGate(() => recoverJournal(paths));
  const driver: ObjectStoreDriver = {
    name: "fs",
    atomicCreateOnly: true,
    keepsContentType: false,
    // The signed handler hashes an upload while it streams and stores nothing that differs.
    directUploadVerifiesSha256: true,
    // rename and link keep the inode, so its mtime.
    moveKeepsLastModified: true,
    put: afterReady(ready, (key, body, { ifNoneMatch, signal }) =>
      putFile(context, key, body, ifNoneMatch === "*", signal),
    ),
    get: afterReady(ready, (key) => getFile(context, key)),
    stream: afterReady(ready, (key) => streamFile(context, key)),
    head: afterReady(ready, (key) => headFile(context, key)),
    delete: afterReady(ready, (key) => deleteFile(context, key)),
    list: afterReady(ready, (list) => listFiles(context, list)),
    iterate: iterateAfterReady(ready, (iterate) => iterateFiles(context, iterate)),
    keys: iterateAfterReady(ready, (keys) => iterateFileKeys(context, keys)),
    move: afterReady(ready, (from, to, { ifNoneMatch }) => moveFile(context, from, to, ifNoneMatch === "*")),
    uriFor: (key) => pathToFileURL(paths.pathFor(key)).href,
    touch: afterReady(ready, (key) => touchFile(context, key)),
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

  return Object.freeze({
    ...store,
    // Always set (the driver has it); restated because ObjectStore declares it optional.
    uriFor: store.uriFor!,
    root: paths.rootPath,
    removeStaleTempFiles: async (sweep?: { olderThanMs?: number; signal?: AbortSignal }) =>
      // Stale journal segments too: their files fsync'd, then removed (journal-recovery.ts).
      (await recoverJournal(paths)) + (await removeStaleTempFiles(context, sweep)),
    ...(transfer
      ? {
          handleDirectRequest: transfer.handleDirectRequest,
          directUrlsFor: (other: ObjectStore) => directUrlsFor(other, options.directUrls!),
        }
      : {}),
  });
}
