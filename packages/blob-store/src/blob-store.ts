import {
  type ContentStore,
  consoleLogger,
  describeValue,
  isReadableStream,
  type Logger,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { type BlobContext, blobInfo } from "./blob-context.js";
import { toBlobHash } from "./blob-hash.js";
import { type BlobLayout, createBlobKeys } from "./blob-layout.js";
import { getBlob, statBlob, streamBlob, streamVerifiedBlob, verifyBlob } from "./blob-reads.js";
import { putBytes, putStream } from "./blob-writes.js";

/** Options of {@link createBlobStore}. */
export interface BlobStoreOptions {
  /** Where the bytes live: any ObjectStore (fs, memory, S3, Postgres…). */
  store: ObjectStore;
  /** Key layout; default `flat`. */
  layout?: BlobLayout;
  /** Key prefix inside `store`, `""` or ending in `/` (e.g. `blobs/`); default `""`. */
  prefix?: string;
  /** Re-hash on every `get` and `stream` so a corrupted blob is never returned as good; default true. */
  verifyReads?: boolean;
  /**
   * Where warnings about this store's blobs go: `prepareEntryForPersistence` and `resolveBlobRefs`
   * use it when they are not given their own. Default `consoleLogger`.
   */
  logger?: Logger;
}

/** What `put` returns. */
export interface BlobPutResult {
  /** SHA-256 of the raw bytes, 64 lowercase hex. */
  hash: string;
  /** `blob:sha256:<hash>`, the reference to store in session entries. */
  ref: string;
  size: number;
  /**
   * False when the blob was already stored. A put of bytes rewrites a stored copy that differs
   * (corrupted) and reports it as created; a streamed put always replaces the stored copy with the
   * verified new one, so it repairs too, and reports false when a copy was there.
   */
  created: boolean;
}

/** A stored blob, as `stat`, `list` and `iterate` report it. */
export interface BlobInfo {
  hash: string;
  ref: string;
  size: number;
  lastModified: Date;
}

/** A page of `list`. */
export interface BlobListPage {
  items: BlobInfo[];
  cursor: string | undefined;
}

/** A content-addressed store of blobs: core's `ContentStore`, plus streams, listing and verification. */
export interface BlobStore extends ContentStore {
  readonly layout: BlobLayout;
  readonly prefix: string;
  /** Where warnings about its blobs go (`BlobStoreOptions.logger`). */
  readonly logger: Logger;
  /** The underlying ObjectStore. */
  readonly objects: ObjectStore;
  /** Where collections given `trashMs` keep what they take: `<prefix>.gc-trash/`, one object per hash. */
  readonly trashPrefix: string;
  /** The object key a blob is stored under. */
  keyFor(hashOrRef: string): string;
  /**
   * Stores bytes or a stream, hashing as it goes; idempotent, and durable when it returns. A stored
   * copy is compared (bytes) or replaced (stream), so a corrupted copy is repaired; a copy that is
   * kept has its timestamp refreshed, so a running garbage collection keeps it.
   */
  put(body: Uint8Array | ReadableStream<Uint8Array>, options?: OperationOptions): Promise<BlobPutResult>;
  /** The blob's bytes, or `null` if absent; INTEGRITY if they no longer match their hash. */
  get(hashOrRef: string, options?: OperationOptions): Promise<Uint8Array | null>;
  /**
   * A stream of the blob, or `null`. Bytes are handed over as they are read: with `verifyReads`, a
   * corrupted blob errors with INTEGRITY only at the stream's end, after its bytes went out. A
   * caller that may act only on correct bytes uses `streamVerified` (or `get`).
   */
  stream(hashOrRef: string, options?: OperationOptions): Promise<ReadableStream<Uint8Array> | null>;
  /**
   * A stream of bytes already known to be correct, or `null`: the blob is read and hashed once
   * (INTEGRITY, before any byte is handed over, when it is corrupted), then streamed, and checked
   * again on the way (so a copy changed in between still errors at its end). Reads the blob
   * twice; always verifies, whatever `verifyReads` says.
   */
  streamVerified(hashOrRef: string, options?: OperationOptions): Promise<ReadableStream<Uint8Array> | null>;
  has(hashOrRef: string, options?: OperationOptions): Promise<boolean>;
  stat(hashOrRef: string, options?: OperationOptions): Promise<BlobInfo | null>;
  delete(hashOrRef: string, options?: OperationOptions): Promise<void>;
  list(options?: { cursor?: string; limit?: number; signal?: AbortSignal }): Promise<BlobListPage>;
  iterate(options?: OperationOptions): AsyncIterable<BlobInfo>;
  /** Re-hashes a stored blob; NOT_FOUND if absent, INTEGRITY if corrupted. */
  verify(hashOrRef: string, options?: OperationOptions): Promise<{ hash: string; size: number }>;
  /** The URI of a blob's object (`file://…`, `s3://…`) where the ObjectStore has one; else undefined. */
  uriFor(hashOrRef: string): string | undefined;
  /**
   * Brings back a blob a collection with `trashMs` took, while its trash keeps it: true when the
   * blob is stored again (also when a writer stored the same bytes meanwhile), false when the
   * trash has no such blob (never taken, purged). Stamped now, so the next collection's grace
   * period keeps it while whatever should reference it is put right.
   */
  restoreCollected(hashOrRef: string, options?: OperationOptions): Promise<boolean>;
}

/** A content-addressed blob store over any ObjectStore. */
export function createBlobStore(options: BlobStoreOptions): BlobStore {
  const objects = options?.store;
  if (!objects || typeof objects.put !== "function" || typeof objects.iterate !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createBlobStore: store must be an ObjectStore, got ${describeValue(objects)}`,
    );
  }
  const layout = options.layout ?? "flat";
  const prefix = options.prefix ?? "";
  const logger = options.logger ?? consoleLogger;
  const keys = createBlobKeys(layout, prefix);
  const context: BlobContext = {
    objects,
    keys,
    verifyReads: options.verifyReads ?? true,
    recordsTouches: !objects.capabilities.moveKeepsLastModified,
  };
  const keyFor = (hashOrRef: string) => keys.keyFor(toBlobHash(hashOrRef));

  return Object.freeze({
    layout,
    prefix,
    logger,
    objects,
    trashPrefix: keys.trashPrefix,
    keyFor,
    async put(body: Uint8Array | ReadableStream<Uint8Array>, opts: OperationOptions = {}) {
      if (body instanceof Uint8Array) return putBytes(context, body, opts.signal);
      if (isReadableStream(body)) return putStream(context, body, opts.signal);
      throw new StowageError(
        "INVALID_INPUT",
        `blob body must be a Uint8Array or a ReadableStream<Uint8Array>, got ${describeValue(body)}`,
      );
    },
    get: (hashOrRef: string, opts?: OperationOptions) => getBlob(context, hashOrRef, opts),
    stream: (hashOrRef: string, opts?: OperationOptions) => streamBlob(context, hashOrRef, opts),
    streamVerified: (hashOrRef: string, opts?: OperationOptions) =>
      streamVerifiedBlob(context, hashOrRef, opts),
    async has(hashOrRef: string, opts: OperationOptions = {}) {
      return (await statBlob(context, hashOrRef, opts)) !== null;
    },
    stat: (hashOrRef: string, opts?: OperationOptions) => statBlob(context, hashOrRef, opts),
    async delete(hashOrRef: string, opts: OperationOptions = {}) {
      const hash = toBlobHash(hashOrRef);
      await objects.delete(keys.keyFor(hash), opts);
      // A copy a collection holds aside would otherwise come back when the collection puts it back.
      await objects.delete(keys.asidePrefix + hash, opts);
      if (context.recordsTouches) await objects.delete(keys.touchRecordPrefix + hash, opts);
    },
    async list(opts: { cursor?: string; limit?: number; signal?: AbortSignal } = {}) {
      const page = await objects.list({ ...opts, prefix });
      const items: BlobInfo[] = [];
      for (const item of page.items) {
        const hash = keys.hashFromKey(item.key);
        if (hash) items.push(blobInfo(hash, item.size, item.lastModified));
      }
      return { items, cursor: page.cursor };
    },
    async *iterate(opts: OperationOptions = {}) {
      for await (const item of objects.iterate({ prefix, signal: opts.signal })) {
        const hash = keys.hashFromKey(item.key);
        if (hash) yield blobInfo(hash, item.size, item.lastModified);
      }
    },
    verify: (hashOrRef: string, opts?: OperationOptions) => verifyBlob(context, hashOrRef, opts),
    async restoreCollected(hashOrRef: string, opts: OperationOptions = {}) {
      const hash = toBlobHash(hashOrRef);
      const trashed = keys.trashPrefix + hash;
      try {
        await objects.move(trashed, keys.keyFor(hash), { ifNoneMatch: "*", ...opts });
      } catch (err) {
        if (StowageError.is(err, "NOT_FOUND")) return false;
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
        // Stored again meanwhile: the bytes are the same (content-addressed), the copy goes.
        await objects.delete(trashed, opts);
      }
      await objects.touch(keys.keyFor(hash), opts);
      return true;
    },
    uriFor(hashOrRef: string) {
      // Validated first: `objects.uriFor?.(…)` would skip its argument on a store without URIs.
      const key = keyFor(hashOrRef);
      return objects.uriFor?.(key);
    },
  });
}
