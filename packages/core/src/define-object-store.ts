import { abortedError, throwIfAborted } from "./abort.js";
import { assertContentType } from "./content-type.js";
import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import { assertSafeKey, assertSafeKeyPrefix, pathSegmentProblem } from "./keys.js";
import {
  DEFAULT_LIST_LIMIT,
  type DirectDownloadRequest,
  type DirectUploadRequest,
  type IterateOptions,
  type ListItem,
  type ListOptions,
  type ListPage,
  MAX_CURSOR_LENGTH,
  MAX_LIST_LIMIT,
  type MoveOptions,
  type ObjectBody,
  type ObjectInfo,
  type ObjectStore,
  type OperationOptions,
  type PutOptions,
  type PutResult,
  type SignedRequest,
} from "./object-store.js";
import { isSha256Hex } from "./sha256.js";
import { isReadableStream } from "./streams.js";
import { fromSystemError } from "./system-errors.js";

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
 * has no native version.
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

/** Longest signed URL lifetime accepted (the S3 limit: 7 days). */
export const MAX_SIGNED_URL_SECONDS = 7 * 24 * 3600;

function assertIfNoneMatch(value: unknown): void {
  if (value !== undefined && value !== "*") {
    throw new StowageError("INVALID_INPUT", `ifNoneMatch must be "*" or absent, got ${describeValue(value)}`);
  }
}

function assertBody(body: unknown): asserts body is ObjectBody {
  if (body instanceof Uint8Array) return;
  if (isReadableStream(body)) {
    if (body.locked) throw new StowageError("INVALID_INPUT", "body stream is locked (already being read)");
    return;
  }
  throw new StowageError(
    "INVALID_INPUT",
    `body must be a Uint8Array or a ReadableStream<Uint8Array>, got ${describeValue(body)}`,
  );
}

function listLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new StowageError(
      "INVALID_INPUT",
      `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${describeValue(limit)}`,
    );
  }
  return limit;
}

function assertCursor(cursor: unknown): asserts cursor is string | undefined {
  if (cursor === undefined) return;
  if (typeof cursor !== "string" || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH) {
    throw new StowageError(
      "INVALID_INPUT",
      `cursor must be the non-empty string returned by the previous page, got ${describeValue(cursor)}`,
    );
  }
}

function assertDirectUpload(request: DirectUploadRequest): void {
  assertSafeKey(request.key);
  assertContentType(request.contentType);
  if (!Number.isSafeInteger(request.contentLength) || request.contentLength < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `contentLength must be a non-negative integer, got ${describeValue(request.contentLength)}`,
    );
  }
  if (request.sha256 !== undefined && !isSha256Hex(request.sha256)) {
    throw new StowageError(
      "INVALID_INPUT",
      `sha256 must be 64 lowercase hex characters, got ${describeValue(request.sha256)}`,
    );
  }
  assertExpiry(request.expiresInSeconds);
}

function assertDirectDownload(request: DirectDownloadRequest): void {
  assertSafeKey(request.key);
  assertExpiry(request.expiresInSeconds);
  const { disposition, filename } = request;
  if (disposition !== undefined && disposition !== "inline" && disposition !== "attachment") {
    throw new StowageError(
      "INVALID_INPUT",
      `disposition must be "inline" or "attachment", got ${describeValue(disposition)}`,
    );
  }
  const problem = filename === undefined ? undefined : pathSegmentProblem(filename);
  if (problem) throw new StowageError("INVALID_INPUT", `filename ${problem}, got ${describeValue(filename)}`);
}

function assertExpiry(seconds: unknown): void {
  if (
    typeof seconds !== "number" ||
    !Number.isInteger(seconds) ||
    seconds < 1 ||
    seconds > MAX_SIGNED_URL_SECONDS
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `expiresInSeconds must be an integer from 1 to ${MAX_SIGNED_URL_SECONDS}, got ${describeValue(seconds)}`,
    );
  }
}

/** Turn a driver into an ObjectStore that enforces the contract at its edge. */
export function defineObjectStore(driver: ObjectStoreDriver): ObjectStore {
  const name = driver.name;
  const mapError = (err: unknown, context: string): StowageError =>
    StowageError.is(err) ? err : (driver.mapError ?? fromSystemError)(err, context);

  async function run<T>(
    operation: string,
    subject: string | undefined,
    signal: AbortSignal | undefined,
    action: () => Promise<T>,
  ): Promise<T> {
    const context =
      subject === undefined ? `${name} ${operation}` : `${name} ${operation} ${describeValue(subject)}`;
    throwIfAborted(signal, context);
    try {
      return await action();
    } catch (err) {
      if (signal?.aborted && !StowageError.is(err, "ABORTED")) throw abortedError(signal, context);
      throw mapError(err, context);
    }
  }

  /** The driver's stream, with errors that break it off mid-body mapped like every other error. */
  function mappedStream(source: ReadableStream<Uint8Array>, context: string): ReadableStream<Uint8Array> {
    const reader = source.getReader();
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } catch (err) {
            throw mapError(err, context);
          }
          if (chunk.done) controller.close();
          else controller.enqueue(chunk.value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }

  async function list(options: ListOptions = {}): Promise<ListPage> {
    const prefix = options.prefix ?? "";
    assertSafeKeyPrefix(prefix);
    assertCursor(options.cursor);
    const limit = listLimit(options.limit);
    return run("list", prefix, options.signal, () =>
      driver.list({ prefix, cursor: options.cursor, limit, signal: options.signal }),
    );
  }

  async function* paginate(prefix: string, pageSize: number, signal?: AbortSignal): AsyncGenerator<ListItem> {
    let cursor: string | undefined;
    for (;;) {
      const page = await list({ prefix, cursor, limit: pageSize, signal });
      yield* page.items;
      if (page.cursor === undefined) return;
      if (page.cursor === cursor) {
        throw new StowageError("INTERNAL", `${name} list returned a cursor that does not advance`);
      }
      cursor = page.cursor;
    }
  }

  async function* iterate(options: IterateOptions = {}): AsyncGenerator<ListItem> {
    const prefix = options.prefix ?? "";
    assertSafeKeyPrefix(prefix);
    const pageSize = listLimit(options.pageSize);
    const { signal } = options;
    if (!driver.iterate) {
      yield* paginate(prefix, pageSize, signal);
      return;
    }
    const context = `${name} iterate ${describeValue(prefix)}`;
    throwIfAborted(signal, context);
    try {
      for await (const item of driver.iterate({ prefix, signal })) {
        throwIfAborted(signal, context);
        yield item;
      }
    } catch (err) {
      throw mapError(err, context);
    }
  }

  async function put(key: string, body: ObjectBody, options: PutOptions = {}): Promise<PutResult> {
    assertSafeKey(key);
    assertBody(body);
    assertIfNoneMatch(options.ifNoneMatch);
    if (options.contentType !== undefined) assertContentType(options.contentType);
    return run("put", key, options.signal, () => driver.put(key, body, options));
  }

  async function head(key: string, options: OperationOptions = {}): Promise<ObjectInfo | null> {
    assertSafeKey(key);
    return run("head", key, options.signal, () => driver.head(key, options));
  }

  async function move(from: string, to: string, options: MoveOptions = {}): Promise<PutResult> {
    assertSafeKey(from, "from");
    assertSafeKey(to, "to");
    assertIfNoneMatch(options.ifNoneMatch);
    return run("move", `${from} -> ${to}`, options.signal, async () => {
      if (from === to) {
        const info = await driver.head(from, options);
        if (!info) throw new StowageError("NOT_FOUND", `${name} move: ${describeValue(from)} does not exist`);
        if (options.ifNoneMatch === "*") {
          throw new StowageError("ALREADY_EXISTS", `${name} move: ${describeValue(to)} already exists`);
        }
        return { key: to, size: info.size, created: false };
      }
      if (driver.move) return driver.move(from, to, options);
      const info = await driver.head(from, options);
      const body = info && (await driver.stream(from, options));
      if (!info || !body)
        throw new StowageError("NOT_FOUND", `${name} move: ${describeValue(from)} does not exist`);
      const result = await driver.put(to, body, {
        ifNoneMatch: options.ifNoneMatch,
        signal: options.signal,
        ...(info.contentType === undefined ? {} : { contentType: info.contentType }),
      });
      await driver.delete(from, options);
      return result;
    });
  }

  async function touch(key: string, options: OperationOptions = {}): Promise<boolean> {
    assertSafeKey(key);
    const nativeTouch = driver.touch;
    if (nativeTouch) return run("touch", key, options.signal, () => nativeTouch(key, options));
    // Without a native touch, rewriting the same bytes is the only way to refresh lastModified.
    return run("touch", key, options.signal, async () => {
      const info = await driver.head(key, options);
      const bytes = info && (await driver.get(key, options));
      if (!info || !bytes) return false;
      await driver.put(key, bytes, {
        signal: options.signal,
        ...(info.contentType === undefined ? {} : { contentType: info.contentType }),
      });
      return true;
    });
  }

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
    put,
    async get(key, options = {}) {
      assertSafeKey(key);
      return run("get", key, options.signal, () => driver.get(key, options));
    },
    async stream(key, options = {}) {
      assertSafeKey(key);
      const source = await run("stream", key, options.signal, () => driver.stream(key, options));
      return source && mappedStream(source, `${name} stream ${describeValue(key)}`);
    },
    head,
    async delete(key, options = {}) {
      assertSafeKey(key);
      return run("delete", key, options.signal, () => driver.delete(key, options));
    },
    list,
    iterate,
    move,
    touch,
  };

  const { createUploadUrl, createDownloadUrl, uriFor } = driver;
  if (createUploadUrl) {
    store.createUploadUrl = async (request, options = {}) => {
      assertDirectUpload(request);
      return run("createUploadUrl", request.key, options.signal, () => createUploadUrl(request, options));
    };
  }
  if (createDownloadUrl) {
    store.createDownloadUrl = async (request, options = {}) => {
      assertDirectDownload(request);
      return run("createDownloadUrl", request.key, options.signal, () => createDownloadUrl(request, options));
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
