import { describeValue } from "./describe-value.js";
import type { StowageError } from "./errors.js";
import { assertSafeKey } from "./keys.js";
import type {
  DirectDownloadRequest,
  DirectUploadRequest,
  ListItem,
  ListPage,
  MoveOptions,
  ObjectBody,
  ObjectInfo,
  ObjectStore,
  OperationOptions,
  PutOptions,
  PutResult,
  SignedRequest,
} from "./object-store.js";
import { assertDirectDownload, assertDirectUpload } from "./object-store-input.js";
import { iterateKeys } from "./object-store-keys.js";
import {
  headObject,
  iterateObjects,
  listObjects,
  mappedStream,
  moveObject,
  putObject,
  run,
  touchObject,
} from "./object-store-operations.js";

/** What a driver's `list` receives: every field validated and defaulted. */
export interface DriverListOptions extends OperationOptions {
  prefix: string;
  cursor: string | undefined;
  limit: number;
}

/**
 * What a backend implements. `defineObjectStore` validates every key, prefix, body and option
 * before a driver method is called, maps every other error to StowageError (through `mapError`,
 * in one place, streams included), and supplies `iterate`, `move` and `touch` where the driver
 * has no native version (and `keys` from `iterate`).
 */
export interface ObjectStoreDriver {
  name: string;
  /** Create-only puts are atomic in this backend. */
  atomicCreateOnly: boolean;
  /** The backend keeps the content type given to `put`. */
  keepsContentType: boolean;
  /** See `ObjectStoreCapabilities.directUploadVerifiesSha256`; default false (verify after upload). */
  directUploadVerifiesSha256?: boolean;
  /** The native `move` keeps `lastModified` (see `ObjectStoreCapabilities.moveKeepsLastModified`); default false. */
  moveKeepsLastModified?: boolean;
  put(key: string, body: ObjectBody, options: PutOptions): Promise<PutResult>;
  get(key: string, options: OperationOptions): Promise<Uint8Array | null>;
  stream(key: string, options: OperationOptions): Promise<ReadableStream<Uint8Array> | null>;
  head(key: string, options: OperationOptions): Promise<ObjectInfo | null>;
  delete(key: string, options: OperationOptions): Promise<void>;
  list(options: DriverListOptions): Promise<ListPage>;
  iterate?(options: { prefix: string; signal?: AbortSignal }): AsyncIterable<ListItem>;
  /**
   * Keys only, in key order (see `ObjectStore.keys`), in batches of at most `pageSize`: what
   * `keys().byPage()` hands out as they come, and `keys()` one by one. Default: `iterate`'s keys.
   */
  keys?(options: {
    prefix: string;
    signal?: AbortSignal;
    pageSize: number;
  }): AsyncIterable<readonly string[]>;
  /** Called only with `from !== to`. */
  move?(from: string, to: string, options: MoveOptions): Promise<PutResult>;
  touch?(key: string, options: OperationOptions): Promise<boolean>;
  createUploadUrl?(request: DirectUploadRequest, options: OperationOptions): Promise<SignedRequest>;
  createDownloadUrl?(request: DirectDownloadRequest, options: OperationOptions): Promise<SignedRequest>;
  /** The URI of a key (see `ObjectStore.uriFor`); called with validated keys only. */
  uriFor?(key: string): string;
  /**
   * Maps an error this backend's client threw (an S3 error, a SQLSTATE…) to a StowageError.
   * `context` says what was being done (`s3 put "a/b"`). Default: Node errno mapping.
   */
  mapError?(err: unknown, context: string): StowageError;
}

/** Turn a driver into an ObjectStore that enforces the contract at its edge. */
export function defineObjectStore(driver: ObjectStoreDriver): ObjectStore {
  const { name } = driver;
  const store: ObjectStore = {
    name,
    capabilities: Object.freeze({
      atomicCreateOnly: driver.atomicCreateOnly,
      contentType: driver.keepsContentType,
      nativeMove: driver.move !== undefined,
      // The fallback move copies through this process, which stamps a new time.
      moveKeepsLastModified: driver.move !== undefined && driver.moveKeepsLastModified === true,
      nativeTouch: driver.touch !== undefined,
      directUpload: driver.createUploadUrl !== undefined,
      directDownload: driver.createDownloadUrl !== undefined,
      directUploadVerifiesSha256:
        driver.createUploadUrl !== undefined && driver.directUploadVerifiesSha256 === true,
    }),
    put: (key, body, options) => putObject(driver, key, body, options),
    async get(key, options = {}) {
      assertSafeKey(key);
      return run(driver, "get", key, options.signal, () => driver.get(key, options));
    },
    async stream(key, options = {}) {
      assertSafeKey(key);
      const source = await run(driver, "stream", key, options.signal, () => driver.stream(key, options));
      return source && mappedStream(driver, source, `${name} stream ${describeValue(key)}`);
    },
    head: (key, options) => headObject(driver, key, options),
    async delete(key, options = {}) {
      assertSafeKey(key);
      return run(driver, "delete", key, options.signal, () => driver.delete(key, options));
    },
    list: (options) => listObjects(driver, options),
    iterate: (options) => iterateObjects(driver, options),
    keys: (options) => iterateKeys(driver, options),
    move: (from, to, options) => moveObject(driver, from, to, options),
    touch: (key, options) => touchObject(driver, key, options),
  };

  const { createUploadUrl, createDownloadUrl, uriFor } = driver;
  if (createUploadUrl) {
    store.createUploadUrl = async (request, options = {}) => {
      assertDirectUpload(request);
      return run(driver, "createUploadUrl", request.key, options.signal, () =>
        createUploadUrl(request, options),
      );
    };
  }
  if (createDownloadUrl) {
    store.createDownloadUrl = async (request, options = {}) => {
      assertDirectDownload(request);
      return run(driver, "createDownloadUrl", request.key, options.signal, () =>
        createDownloadUrl(request, options),
      );
    };
  }
  if (uriFor) {
    store.uriFor = (key) => {
      assertSafeKey(key);
      return uriFor(key);
    };
  }
  return Object.freeze(store);
}
