import { randomUUID } from "node:crypto";
import {
  type ContentStore,
  consoleLogger,
  describeValue,
  formatBlobRef,
  isReadableStream,
  type Logger,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import { toBlobHash } from "./blob-hash.js";
import { type BlobLayout, createBlobKeys } from "./blob-layout.js";
import { hashingTransform } from "./hashing.js";

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
}

/** Times a read looks at a blob's key and its aside key before it reports the blob absent. */
const READ_ROUNDS = 2;
/**
 * Writes a `put` makes before it gives up (CONFLICT) when collections keep taking its blob away
 * between its write and its check; each round needs a collection that chose this very blob.
 */
const MAX_PUT_ROUNDS = 4;
const EMPTY = new Uint8Array(0);

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** A put that collections kept from storing its blob: by default, taken between write and check every round. */
function collectedDuringPut(
  hash: string,
  what = `was taken by garbage collections ${MAX_PUT_ROUNDS} times while it was being stored`,
  cause?: unknown,
): StowageError {
  return new StowageError("CONFLICT", `blob ${hash} ${what}; put it again`, {
    reason: "COLLECTED_DURING_PUT",
    details: { hash },
    ...(cause === undefined ? {} : { cause }),
  });
}

function integrityError(hash: string, actual: string, key: string): StowageError {
  return new StowageError("INTEGRITY", `blob ${hash} is corrupted: its bytes hash to ${actual}`, {
    details: { expected: hash, actual, key },
  });
}

/** `source` passed through, erroring with INTEGRITY at its end unless its bytes hash to `hash`. */
function verifying(source: ReadableStream<Uint8Array>, hash: string, key: string) {
  const hashing = hashingTransform((digest) =>
    digest.hash === hash ? undefined : integrityError(hash, digest.hash, key),
  );
  return { stream: source.pipeThrough(hashing.transform), digest: hashing.result };
}

/** Reads a stream to its end; a verifying stream errors with INTEGRITY there on a mismatch. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  for await (const _chunk of stream as unknown as AsyncIterable<Uint8Array>);
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
  const logger = options.logger ?? consoleLogger;
  const keys = createBlobKeys(layout, prefix);

  const keyFor = (hashOrRef: string) => keys.keyFor(toBlobHash(hashOrRef));
  const info = (hash: string, size: number, lastModified: Date): BlobInfo => ({
    hash,
    ref: formatBlobRef(hash),
    size,
    lastModified,
  });

  // The write protocol that garbage collection relies on (see collect-garbage.ts). A put never
  // reports a blob it did not see stored at the moment it returned.
  //
  // Where a move keeps timestamps (fs, memory, PostgreSQL), a put that finds the blob refreshes its
  // timestamp, and when the touch finds nothing (a collection moved the blob aside between the
  // look and the touch) it writes the blob again; a collection sees a touch made before its move
  // in the timestamp it moved.
  //
  // Where a move restamps (S3), that timestamp tells nothing, so a put writes a touch record
  // instead (and touches nothing: on S3 a touch is a copy of the object), then looks at the blob:
  // a collection that moved the blob before the record shows in the look (the write is made
  // again), and one that moves it after the record finds the record, young, and puts it back.
  const recordsTouches = !objects.capabilities.moveKeepsLastModified;

  /** True when the blob is at `key` after its touch record was written (always true where none is needed). */
  async function stillStoredAfterRecord(hash: string, key: string, signal?: AbortSignal): Promise<boolean> {
    if (!recordsTouches) return true;
    await objects.put(keys.touchRecordPrefix + hash, EMPTY, { signal });
    return (await objects.head(key, { signal })) !== null;
  }

  /** Keeps a stored copy in a running collection's eyes: its touch record follows, or a fresh timestamp. */
  const keepStored = async (key: string, signal?: AbortSignal) =>
    recordsTouches || (await objects.touch(key, { signal }));

  async function putBytes(bytes: Uint8Array, signal?: AbortSignal): Promise<BlobPutResult> {
    const hash = sha256Hex(bytes);
    const key = keys.keyFor(hash);
    const result = { hash, ref: formatBlobRef(hash), size: bytes.byteLength };
    for (let round = 1; round <= MAX_PUT_ROUNDS; round++) {
      let created = true;
      // Compared, not trusted by existence or size: a corrupted copy, even of the right size, is
      // rewritten (repaired) below. One GET, no HEAD first: a miss costs the same either way.
      const stored = await objects.get(key, { signal });
      if (stored && sameBytes(stored, bytes) && (await keepStored(key, signal))) created = false;
      // A plain put: a concurrent writer of the same hash writes the same bytes, so whichever
      // rename lands last leaves identical content.
      if (created) await objects.put(key, bytes, { signal });
      if (await stillStoredAfterRecord(hash, key, signal)) return { ...result, created };
    }
    throw collectedDuringPut(hash);
  }

  async function putStream(body: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<BlobPutResult> {
    // The key depends on the hash, known only at the end: stage the bytes, then move them. The
    // move replaces a stored copy with the staged bytes, which hash right by construction: it is
    // the touch (a fresh timestamp) and the repair of a corrupted copy in one step.
    const stagingKey = keys.stagingPrefix + randomUUID();
    const hashing = hashingTransform();
    await objects.put(stagingKey, body.pipeThrough(hashing.transform), { signal });
    const { hash, size } = hashing.result();
    const key = keys.keyFor(hash);
    let moved: { created: boolean };
    try {
      moved = await objects.move(stagingKey, key, { signal });
    } catch (err) {
      await objects.delete(stagingKey).catch(() => {});
      // The staged bytes were removed under the put (a collection with a `stagingGraceMs` shorter
      // than the put's pause): the stream is consumed, so only the caller can put it again.
      if (StowageError.is(err, "NOT_FOUND")) {
        throw collectedDuringPut(
          hash,
          "was not stored: its staged bytes were removed by a garbage collection before they could be moved",
          err,
        );
      }
      throw err;
    }
    const result = { hash, ref: formatBlobRef(hash), size, created: moved.created };
    for (let round = 1; round <= MAX_PUT_ROUNDS; round++) {
      if (await stillStoredAfterRecord(hash, key, signal)) return result;
      // A collection moved the blob aside after the move and before the record: the staged bytes
      // are gone, so its aside copy (the same bytes) is put back. Gone too when that collection
      // already deleted it, and then the put fails rather than report a blob that is not there.
      await putBackAside(hash, key, signal);
    }
    throw collectedDuringPut(hash);
  }

  async function putBackAside(hash: string, key: string, signal?: AbortSignal): Promise<void> {
    try {
      await objects.move(keys.asidePrefix + hash, key, { ifNoneMatch: "*", signal });
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS") && !StowageError.is(err, "NOT_FOUND")) throw err;
    }
  }

  // While a garbage collection decides about a blob it is moved aside; reads find it there. A
  // blob moves between the two keys (aside, then back), so each is looked at twice before a read
  // reports it absent.
  async function readFrom<T>(hash: string, read: (key: string) => Promise<T | null>): Promise<T | null> {
    for (let round = 0; round < READ_ROUNDS; round++) {
      const found = (await read(keys.keyFor(hash))) ?? (await read(keys.asidePrefix + hash));
      if (found) return found;
    }
    return null;
  }
  const readBytes = (hash: string, opts: OperationOptions) => readFrom(hash, (key) => objects.get(key, opts));
  const readStream = (hash: string, opts: OperationOptions) =>
    readFrom(hash, (key) => objects.stream(key, opts));

  async function get(hashOrRef: string, opts: OperationOptions = {}): Promise<Uint8Array | null> {
    const hash = toBlobHash(hashOrRef);
    const key = keys.keyFor(hash);
    const bytes = await readBytes(hash, opts);
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
    const source = await readStream(hash, opts);
    if (!source || !verifyReads) return source;
    return verifying(source, hash, key).stream;
  }

  async function streamVerified(
    hashOrRef: string,
    opts: OperationOptions = {},
  ): Promise<ReadableStream<Uint8Array> | null> {
    const hash = toBlobHash(hashOrRef);
    const key = keys.keyFor(hash);
    const first = await readStream(hash, opts);
    if (!first) return null;
    await drain(verifying(first, hash, key).stream);
    const source = await readStream(hash, opts);
    // Deleted between the two reads: as absent as it is now.
    return source && verifying(source, hash, key).stream;
  }

  async function stat(hashOrRef: string, opts: OperationOptions = {}): Promise<BlobInfo | null> {
    const hash = toBlobHash(hashOrRef);
    const head = await readFrom(hash, (key) => objects.head(key, opts));
    return head ? info(hash, head.size, head.lastModified) : null;
  }

  async function verify(
    hashOrRef: string,
    opts: OperationOptions = {},
  ): Promise<{ hash: string; size: number }> {
    const hash = toBlobHash(hashOrRef);
    const key = keys.keyFor(hash);
    const source = await readStream(hash, opts);
    if (!source) throw new StowageError("NOT_FOUND", `blob ${hash} does not exist`);
    const { stream: checked, digest } = verifying(source, hash, key);
    await drain(checked);
    return { hash, size: digest().size };
  }

  return Object.freeze({
    layout,
    prefix,
    logger,
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
    streamVerified,
    async has(hashOrRef: string, opts: OperationOptions = {}) {
      return (await stat(hashOrRef, opts)) !== null;
    },
    stat,
    async delete(hashOrRef: string, opts: OperationOptions = {}) {
      const hash = toBlobHash(hashOrRef);
      await objects.delete(keys.keyFor(hash), opts);
      // A copy a collection holds aside would otherwise come back when the collection puts it back.
      await objects.delete(keys.asidePrefix + hash, opts);
      if (recordsTouches) await objects.delete(keys.touchRecordPrefix + hash, opts);
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
    uriFor(hashOrRef: string) {
      // Validated first: `objects.uriFor?.(…)` would skip its argument on a store without URIs.
      const key = keyFor(hashOrRef);
      return objects.uriFor?.(key);
    },
  });
}
