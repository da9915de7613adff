import { createHash, randomUUID } from "node:crypto";
import {
  describeValue,
  isReadableStream,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import { type BlobLayout, createBlobKeys } from "./blob-layout.js";
import { formatBlobRef, toBlobHash } from "./blob-ref.js";
import { hashingTransform, sha256Hex } from "./hashing.js";

export interface BlobStoreOptions {
  /** Where the bytes live: any ObjectStore (fs, memory, S3, Postgres…). */
  store: ObjectStore;
  /** Key layout; default `flat`. */
  layout?: BlobLayout;
  /** Key prefix inside `store`, `""` or ending in `/` (e.g. `blobs/`); default `""`. */
  prefix?: string;
  /** Re-hash on every `get` and `stream` so a corrupted blob is never returned as good; default true. */
  verifyReads?: boolean;
}

export interface BlobPutResult {
  /** SHA-256 of the raw bytes, 64 lowercase hex. */
  hash: string;
  /** `blob:sha256:<hash>`, the reference to store in session entries. */
  ref: string;
  size: number;
  /** False when the blob was already stored (nothing was rewritten). */
  created: boolean;
}

export interface BlobInfo {
  hash: string;
  ref: string;
  size: number;
  lastModified: Date;
}

export interface BlobListPage {
  items: BlobInfo[];
  cursor: string | undefined;
}

export interface BlobStore {
  readonly layout: BlobLayout;
  readonly prefix: string;
  /** The underlying ObjectStore. */
  readonly objects: ObjectStore;
  /** The object key a blob is stored under. */
  keyFor(hashOrRef: string): string;
  /** Stores bytes or a stream, hashing as it goes; idempotent, and durable when it returns. */
  put(body: Uint8Array | ReadableStream<Uint8Array>, options?: OperationOptions): Promise<BlobPutResult>;
  /** The blob's bytes, or `null` if absent; INTEGRITY if they no longer match their hash. */
  get(hashOrRef: string, options?: OperationOptions): Promise<Uint8Array | null>;
  /** A stream of the blob, or `null`; with `verifyReads` the stream errors with INTEGRITY at its end. */
  stream(hashOrRef: string, options?: OperationOptions): Promise<ReadableStream<Uint8Array> | null>;
  has(hashOrRef: string, options?: OperationOptions): Promise<boolean>;
  stat(hashOrRef: string, options?: OperationOptions): Promise<BlobInfo | null>;
  delete(hashOrRef: string, options?: OperationOptions): Promise<void>;
  list(options?: { cursor?: string; limit?: number; signal?: AbortSignal }): Promise<BlobListPage>;
  iterate(options?: OperationOptions): AsyncIterable<BlobInfo>;
  /** Re-hashes a stored blob; NOT_FOUND if absent, INTEGRITY if corrupted. */
  verify(hashOrRef: string, options?: OperationOptions): Promise<{ hash: string; size: number }>;
}

function integrityError(hash: string, actual: string, key: string): StowageError {
  return new StowageError("INTEGRITY", `blob ${hash} is corrupted: its bytes hash to ${actual}`, {
    details: { expected: hash, actual, key },
  });
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
  const verifyReads = options.verifyReads ?? true;
  const keys = createBlobKeys(layout, prefix);

  const keyFor = (hashOrRef: string) => keys.keyFor(toBlobHash(hashOrRef));
  const info = (hash: string, size: number, lastModified: Date): BlobInfo => ({
    hash,
    ref: formatBlobRef(hash),
    size,
    lastModified,
  });

  // Same content, same key: when the blob is already stored with the right size there is nothing
  // to write; its timestamp is refreshed so a concurrent garbage collection sees it as in use.
  async function alreadyStored(key: string, size: number, signal?: AbortSignal): Promise<boolean> {
    const existing = await objects.head(key, { signal });
    if (!existing || existing.size !== size) return false;
    await objects.touch(key, { signal });
    return true;
  }

  async function putBytes(bytes: Uint8Array, signal?: AbortSignal): Promise<BlobPutResult> {
    const hash = sha256Hex(bytes);
    const key = keys.keyFor(hash);
    const result = { hash, ref: formatBlobRef(hash), size: bytes.byteLength };
    if (await alreadyStored(key, bytes.byteLength, signal)) return { ...result, created: false };
    // A plain put: a concurrent writer of the same hash writes the same bytes, so whichever
    // rename lands last leaves identical content; it also repairs a corrupted copy.
    await objects.put(key, bytes, { signal });
    return { ...result, created: true };
  }

  async function putStream(body: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<BlobPutResult> {
    // The key depends on the hash, known only at the end: stage the bytes, then move them.
    const stagingKey = keys.stagingPrefix + randomUUID();
    const hashing = hashingTransform();
    await objects.put(stagingKey, body.pipeThrough(hashing.transform), { signal });
    const { hash, size } = hashing.result();
    const key = keys.keyFor(hash);
    const result = { hash, ref: formatBlobRef(hash), size };
    let moved = false;
    try {
      if (await alreadyStored(key, size, signal)) return { ...result, created: false };
      await objects.move(stagingKey, key, { signal });
      moved = true;
      return { ...result, created: true };
    } finally {
      if (!moved) await objects.delete(stagingKey).catch(() => {});
    }
  }

  async function get(hashOrRef: string, opts: OperationOptions = {}): Promise<Uint8Array | null> {
    const hash = toBlobHash(hashOrRef);
    const key = keys.keyFor(hash);
    const bytes = await objects.get(key, opts);
    if (bytes && verifyReads) {
      const actual = sha256Hex(bytes);
      if (actual !== hash) throw integrityError(hash, actual, key);
    }
    return bytes;
  }

  async function stream(
    hashOrRef: string,
    opts: OperationOptions = {},
  ): Promise<ReadableStream<Uint8Array> | null> {
    const hash = toBlobHash(hashOrRef);
    const key = keys.keyFor(hash);
    const source = await objects.stream(key, opts);
    if (!source || !verifyReads) return source;
    const hasher = createHash("sha256");
    return source.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          hasher.update(chunk);
          controller.enqueue(chunk);
        },
        flush(controller) {
          const actual = hasher.digest("hex");
          if (actual !== hash) controller.error(integrityError(hash, actual, key));
        },
      }),
    );
  }

  async function stat(hashOrRef: string, opts: OperationOptions = {}): Promise<BlobInfo | null> {
    const hash = toBlobHash(hashOrRef);
    const head = await objects.head(keys.keyFor(hash), opts);
    return head ? info(hash, head.size, head.lastModified) : null;
  }

  async function verify(
    hashOrRef: string,
    opts: OperationOptions = {},
  ): Promise<{ hash: string; size: number }> {
    const hash = toBlobHash(hashOrRef);
    const key = keys.keyFor(hash);
    const source = await objects.stream(key, opts);
    if (!source) throw new StowageError("NOT_FOUND", `blob ${hash} does not exist`);
    const hasher = createHash("sha256");
    let size = 0;
    for await (const chunk of source as unknown as AsyncIterable<Uint8Array>) {
      hasher.update(chunk);
      size += chunk.byteLength;
    }
    const actual = hasher.digest("hex");
    if (actual !== hash) throw integrityError(hash, actual, key);
    return { hash, size };
  }

  return Object.freeze({
    layout,
    prefix,
    objects,
    keyFor,
    async put(body: Uint8Array | ReadableStream<Uint8Array>, opts: OperationOptions = {}) {
      if (body instanceof Uint8Array) return putBytes(body, opts.signal);
      if (isReadableStream(body)) return putStream(body, opts.signal);
      throw new StowageError(
        "INVALID_INPUT",
        `blob body must be a Uint8Array or a ReadableStream<Uint8Array>, got ${describeValue(body)}`,
      );
    },
    get,
    stream,
    async has(hashOrRef: string, opts: OperationOptions = {}) {
      return (await stat(hashOrRef, opts)) !== null;
    },
    stat,
    async delete(hashOrRef: string, opts: OperationOptions = {}) {
      await objects.delete(keyFor(hashOrRef), opts);
    },
    async list(opts: { cursor?: string; limit?: number; signal?: AbortSignal } = {}) {
      const page = await objects.list({ ...opts, prefix });
      const items: BlobInfo[] = [];
      for (const item of page.items) {
        const hash = keys.hashFromKey(item.key);
        if (hash) items.push(info(hash, item.size, item.lastModified));
      }
      return { items, cursor: page.cursor };
    },
    async *iterate(opts: OperationOptions = {}) {
      for await (const item of objects.iterate({ prefix, signal: opts.signal })) {
        const hash = keys.hashFromKey(item.key);
        if (hash) yield info(hash, item.size, item.lastModified);
      }
    },
    verify,
  });
}
