import { createHash } from "node:crypto";
import { pathToFileURL } from "node:url";
import {
  assertSha256Hex,
  consoleLogger,
  describeValue,
  isSha256Hex,
  type Logger,
  MAX_LIST_LIMIT,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  throwIfAborted,
  utf8Encode,
} from "@stowage/core";
import { z } from "zod";
import {
  type ArtifactProducer,
  ArtifactProducerSchema,
  type ArtifactRecord,
  ArtifactRecordSchema,
} from "../schemas/artifact-record-schema.js";
import { type ArtifactType, ArtifactTypeSchema } from "../schemas/hot-state-schema.js";
import { freeText, MAX_ARTIFACT_SUMMARY_CHARS, mimeType } from "../schemas/text-fields.js";
import { parseOrThrow } from "../schemas/validation-error.js";
import { encodeWellFormed } from "../text/encode-well-formed.js";
import { createArtifactKeys } from "./artifact-keys.js";
import { canonicalJson } from "./canonical-json.js";
import { readRecordState } from "./record-state.js";
import { JSON_MIME, sniffContent, TEXT_MIME } from "./sniff-content.js";

/** Largest artifact accepted by default (512 KiB); larger content fails with TOO_LARGE. */
export const DEFAULT_MAX_ARTIFACT_BYTES = 512 * 1024;
/** Records per `list` page when no limit is given. */
export const DEFAULT_ARTIFACT_LIST_LIMIT = 100;
/** Largest `limit` a `list` call accepts. */
export const MAX_ARTIFACT_LIST_LIMIT = 1000;
/** Records read at once while listing. */
export const LIST_READ_CONCURRENCY = 8;

export interface ArtifactRegistryOptions {
  /** Where artifacts live: any ObjectStore. */
  store: ObjectStore;
  /** Key prefix inside `store`: `""` or ending in `/`. Default `""`. */
  prefix?: string;
  /** Largest artifact accepted, in bytes. Default {@link DEFAULT_MAX_ARTIFACT_BYTES}. */
  maxBytes?: number;
  /**
   * `file://…/` or `s3://bucket/…/` URI under which the store's keys live, for `content_uri`.
   * Derived from the root for the file-system store; required for any other store.
   */
  baseUri?: string;
  /** Clock for `created_at`. Default `() => new Date()`. */
  now?: () => Date;
  /** Where repairs and skipped artifacts are reported. Default `consoleLogger`. */
  logger?: Logger;
}

export interface StoreArtifactOptions extends OperationOptions {
  /** Default `doc` for text, `data` for JSON and bytes. */
  type?: ArtifactType;
  /** Default `text/plain; charset=utf-8` for text, `application/json` for JSON, none for bytes. */
  mime?: string;
  /** At most {@link MAX_ARTIFACT_SUMMARY_CHARS} characters. */
  summary?: string;
  producer?: ArtifactProducer;
}

export interface StoredArtifact {
  /** The record now stored; for content stored before, the record written then. */
  record: ArtifactRecord;
  /** False when the content was already stored (same bytes, same id). */
  created: boolean;
}

export interface ArtifactWithContent {
  record: ArtifactRecord;
  /** The bytes, verified against the id. */
  content: Uint8Array;
}

export interface ArtifactListOptions extends OperationOptions {
  /** The `cursor` of the previous page (an artifact id). */
  cursor?: string;
  /** Records per page, 1 to {@link MAX_ARTIFACT_LIST_LIMIT}. Default {@link DEFAULT_ARTIFACT_LIST_LIMIT}. */
  limit?: number;
}

export interface ArtifactListPage {
  /** Records in artifact-id order. */
  items: ArtifactRecord[];
  /** Pass to the next call; `undefined` on the last page. */
  cursor: string | undefined;
}

export interface ArtifactRegistry {
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly maxBytes: number;
  /** The object keys of an artifact's content and record. */
  keysFor(id: string): { content: string; record: string };
  storeBytes(bytes: Uint8Array, options?: StoreArtifactOptions): Promise<StoredArtifact>;
  /** Stores text as UTF-8; lone surrogates are refused (UTF-8 cannot carry them). */
  storeText(text: string, options?: StoreArtifactOptions): Promise<StoredArtifact>;
  /** Stores canonical JSON of `value`, so that equal values get equal ids. */
  storeJson(value: unknown, options?: StoreArtifactOptions): Promise<StoredArtifact>;
  /**
   * Content and record, or `null` when the content is absent. INTEGRITY when the bytes no longer
   * hash to `id`. A missing, damaged or stale record is rebuilt, written back and logged.
   */
  get(id: string, options?: OperationOptions): Promise<ArtifactWithContent | null>;
  /** The record alone (repaired like `get` when needed), or `null` when the content is absent. */
  getRecord(id: string, options?: OperationOptions): Promise<ArtifactRecord | null>;
  has(id: string, options?: OperationOptions): Promise<boolean>;
  /** A page of records. A record that needs rebuilding is rebuilt in memory; corrupted content is logged and skipped. */
  list(options?: ArtifactListOptions): Promise<ArtifactListPage>;
  iterate(options?: OperationOptions): AsyncIterable<ArtifactRecord>;
  /** Removes content, then record; removing a missing artifact is not an error. */
  delete(id: string, options?: OperationOptions): Promise<void>;
  /** Re-derives the record from the stored content and writes it if it was missing, damaged or stale. NOT_FOUND without content. */
  rebuildRecord(id: string, options?: OperationOptions): Promise<ArtifactRecord>;
}

const MetadataSchema = z.strictObject({
  type: ArtifactTypeSchema.optional(),
  mime: mimeType().optional(),
  summary: freeText(MAX_ARTIFACT_SUMMARY_CHARS).optional(),
  producer: ArtifactProducerSchema.optional(),
});

const BASE_URI_PATTERN = /^(?:file|s3):\/\/[^\s\u0000-\u001f\u007f]*\/$/;

function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

interface FileBacked {
  pathFor(key: string): string;
}

function isFileBacked(store: ObjectStore): store is ObjectStore & FileBacked {
  return typeof (store as Partial<FileBacked>).pathFor === "function";
}

function integrityError(id: string, actual: string, key: string): StowageError {
  return new StowageError("INTEGRITY", `artifact ${id} is corrupted: its content hashes to ${actual}`, {
    details: { expected: id, actual, key },
  });
}

function assertArtifactId(id: unknown): asserts id is string {
  assertSha256Hex(id, "artifact id");
}

function validateOptions(options: ArtifactRegistryOptions) {
  const store = options?.store;
  if (!store || typeof store.put !== "function" || typeof store.list !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactRegistry: store must be an ObjectStore, got ${describeValue(store)}`,
    );
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_ARTIFACT_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactRegistry: maxBytes must be a positive integer, got ${describeValue(maxBytes)}`,
    );
  }
  const { baseUri } = options;
  if (baseUri !== undefined && (typeof baseUri !== "string" || !BASE_URI_PATTERN.test(baseUri))) {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactRegistry: baseUri must be a file:// or s3:// URI ending in "/", got ${describeValue(baseUri)}`,
    );
  }
  if (baseUri === undefined && !isFileBacked(store)) {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactRegistry: baseUri is required for the ${describeValue(store.name)} store (e.g. "s3://my-bucket/artifacts/"); only a file-system store derives it`,
    );
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createArtifactRegistry: now must be a function, got ${describeValue(options.now)}`,
    );
  }
  return { store, maxBytes, baseUri };
}

/**
 * A content-addressed artifact registry over any ObjectStore: the id is the SHA-256 of the bytes,
 * each artifact is a directory `<aa>/<sha256>/` holding `content` and `record.json` (written in
 * that order, each atomically where the store is), and the content is the truth: a record can
 * always be rebuilt from it.
 */
export function createArtifactRegistry(options: ArtifactRegistryOptions): ArtifactRegistry {
  const { store, maxBytes, baseUri } = validateOptions(options);
  const keys = createArtifactKeys(options.prefix ?? "");
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? consoleLogger;

  const contentUri = (id: string): string => {
    const key = keys.contentKey(id);
    if (baseUri !== undefined) return baseUri + key.split("/").map(encodeURIComponent).join("/");
    return pathToFileURL((store as ObjectStore & FileBacked).pathFor(key)).href;
  };

  const timestamp = (date: Date = now()): string => {
    if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
      throw new StowageError(
        "INVALID_INPUT",
        `artifact registry clock returned ${describeValue(date)}, not a valid Date`,
      );
    }
    return date.toISOString();
  };

  async function writeRecord(record: ArtifactRecord, createOnly: boolean, signal?: AbortSignal) {
    const body = utf8Encode(`${JSON.stringify(record, null, 2)}\n`);
    await store.put(keys.recordKey(record.artifact_id), body, {
      signal,
      ...(createOnly ? { ifNoneMatch: "*" as const } : {}),
    });
  }

  function rebuilt(id: string, content: Uint8Array, createdAt: Date | undefined): ArtifactRecord {
    const { type, mime } = sniffContent(content);
    return {
      artifact_id: id,
      type,
      content_uri: contentUri(id),
      content_hash: id,
      size_bytes: content.byteLength,
      created_at: timestamp(createdAt),
      producer: "system",
      mime,
    };
  }

  /**
   * The record for verified `content`, rebuilt if it needs to be. `write`: the rebuilt record is
   * written back and a failure throws; `best-effort`: a failed write is logged, and the read
   * still succeeds (the content is sound); `none`: nothing is written (listing is a read).
   */
  async function recordFor(
    id: string,
    content: Uint8Array,
    repair: "write" | "best-effort" | "none",
    signal: AbortSignal | undefined,
  ): Promise<ArtifactRecord> {
    const stored = await store.get(keys.recordKey(id), { signal });
    const state = readRecordState(stored, { id, size: content.byteLength, contentUri: contentUri(id) });
    if (state.status === "ok") return state.record;
    let record: ArtifactRecord;
    if (state.status === "stale") {
      record = state.record;
      logger.warn(`artifact ${id}: record points at an old location; content_uri updated`, {
        content_uri: record.content_uri,
      });
    } else {
      const head = await store.head(keys.contentKey(id), { signal });
      record = rebuilt(id, content, head?.lastModified);
      logger.warn(
        `artifact ${id}: record ${state.status === "missing" ? "is missing" : `is damaged (${state.problem})`}; rebuilt from the content`,
        { type: record.type, mime: record.mime },
      );
    }
    if (repair === "none") return record;
    try {
      await writeRecord(record, false, signal);
    } catch (err) {
      if (repair === "write" || StowageError.is(err, "ABORTED")) throw err;
      logger.warn(`artifact ${id}: the rebuilt record could not be written back; it will be rebuilt again`, {
        error: err instanceof Error ? err.message : String(err),
      });
    }
    return record;
  }

  async function verifiedContent(id: string, signal?: AbortSignal): Promise<Uint8Array | null> {
    const key = keys.contentKey(id);
    const content = await store.get(key, { signal });
    if (content === null) return null;
    const actual = sha256Hex(content);
    if (actual !== id) throw integrityError(id, actual, key);
    return content;
  }

  async function storeBytes(
    bytes: Uint8Array,
    defaults: { type: ArtifactType; mime?: string },
    storeOptions: StoreArtifactOptions = {},
  ): Promise<StoredArtifact> {
    if (bytes.byteLength > maxBytes) {
      throw new StowageError(
        "TOO_LARGE",
        `artifact is ${bytes.byteLength} bytes, over the limit of ${maxBytes} bytes`,
        { details: { size: bytes.byteLength, limit: maxBytes } },
      );
    }
    const { signal, ...metadata } = storeOptions;
    const meta = parseOrThrow(MetadataSchema, metadata, "artifact options");
    throwIfAborted(signal, "store artifact");
    const id = sha256Hex(bytes);
    const contentKey = keys.contentKey(id);

    let created = false;
    try {
      await store.put(contentKey, bytes, { ifNoneMatch: "*", signal });
      created = true;
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
      // Same id, so the same bytes, unless the stored copy was damaged: then rewrite it.
      const existing = await store.get(contentKey, { signal });
      if (existing === null || sha256Hex(existing) !== id) {
        if (existing !== null) logger.warn(`artifact ${id}: stored content was corrupted; rewritten`);
        await store.put(contentKey, bytes, { signal });
        created = existing === null;
      }
    }

    const mime = meta.mime ?? defaults.mime;
    const fresh = parseOrThrow(
      ArtifactRecordSchema,
      {
        artifact_id: id,
        type: meta.type ?? defaults.type,
        content_uri: contentUri(id),
        content_hash: id,
        size_bytes: bytes.byteLength,
        created_at: timestamp(),
        ...(meta.producer === undefined ? {} : { producer: meta.producer }),
        ...(meta.summary === undefined ? {} : { summary: meta.summary }),
        ...(mime === undefined ? {} : { mime }),
      },
      "artifact record",
    );
    try {
      await writeRecord(fresh, true, signal);
      return { record: fresh, created };
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    }
    // A record exists (stored before, or by a concurrent writer): keep it if it is sound.
    const stored = await store.get(keys.recordKey(id), { signal });
    const state = readRecordState(stored, { id, size: bytes.byteLength, contentUri: fresh.content_uri });
    if (state.status === "ok") return { record: state.record, created };
    const record = state.status === "stale" ? state.record : fresh;
    await writeRecord(record, false, signal);
    return { record, created };
  }

  async function get(id: string, opts: OperationOptions = {}): Promise<ArtifactWithContent | null> {
    assertArtifactId(id);
    const content = await verifiedContent(id, opts.signal);
    if (content === null) return null;
    return { record: await recordFor(id, content, "best-effort", opts.signal), content };
  }

  async function list(opts: ArtifactListOptions = {}): Promise<ArtifactListPage> {
    const limit = opts.limit ?? DEFAULT_ARTIFACT_LIST_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_ARTIFACT_LIST_LIMIT) {
      throw new StowageError(
        "INVALID_INPUT",
        `limit must be an integer from 1 to ${MAX_ARTIFACT_LIST_LIMIT}, got ${describeValue(limit)}`,
      );
    }
    if (opts.cursor !== undefined && !isSha256Hex(opts.cursor)) {
      throw new StowageError(
        "INVALID_INPUT",
        `cursor must be the artifact id returned by the previous page, got ${describeValue(opts.cursor)}`,
      );
    }
    const { signal } = opts;
    const found: { id: string; size: number; lastModified: Date }[] = [];
    // The record key is the last key of an artifact's directory: listing after it skips that artifact.
    let storeCursor = opts.cursor === undefined ? undefined : keys.recordKey(opts.cursor);
    // One artifact more than asked tells whether another page exists.
    while (found.length <= limit) {
      const page = await store.list({
        prefix: keys.prefix,
        cursor: storeCursor,
        limit: MAX_LIST_LIMIT,
        signal,
      });
      for (const item of page.items) {
        const parsed = keys.parse(item.key);
        if (parsed?.object === "content")
          found.push({ id: parsed.id, size: item.size, lastModified: item.lastModified });
      }
      if (page.cursor === undefined) break;
      storeCursor = page.cursor;
    }
    const pageItems = found.slice(0, limit);
    const records = await mapConcurrent(
      pageItems,
      LIST_READ_CONCURRENCY,
      async (item) => listedRecord(item, signal),
      signal,
    );
    return {
      items: records.filter((record): record is ArtifactRecord => record !== null),
      cursor: found.length > limit ? pageItems[pageItems.length - 1]!.id : undefined,
    };
  }

  async function listedRecord(
    item: { id: string; size: number; lastModified: Date },
    signal: AbortSignal | undefined,
  ): Promise<ArtifactRecord | null> {
    const stored = await store.get(keys.recordKey(item.id), { signal });
    const state = readRecordState(stored, { id: item.id, size: item.size, contentUri: contentUri(item.id) });
    if (state.status === "ok" || state.status === "stale") return state.record;
    try {
      const content = await verifiedContent(item.id, signal);
      if (content === null) return null; // deleted while listing
      return await recordFor(item.id, content, "none", signal);
    } catch (err) {
      if (!StowageError.is(err, "INTEGRITY")) throw err;
      logger.warn(`artifact ${item.id} skipped in listing: ${err.message}`, err.details);
      return null;
    }
  }

  return Object.freeze({
    store,
    prefix: keys.prefix,
    maxBytes,
    keysFor(id: string) {
      assertArtifactId(id);
      return { content: keys.contentKey(id), record: keys.recordKey(id) };
    },
    async storeBytes(bytes: Uint8Array, opts?: StoreArtifactOptions) {
      if (!(bytes instanceof Uint8Array)) {
        throw new StowageError(
          "INVALID_INPUT",
          `artifact content must be a Uint8Array, got ${describeValue(bytes)}`,
        );
      }
      return storeBytes(bytes, { type: "data" }, opts);
    },
    async storeText(text: string, opts?: StoreArtifactOptions) {
      if (typeof text !== "string") {
        throw new StowageError("INVALID_INPUT", `artifact text must be a string, got ${describeValue(text)}`);
      }
      // Every UTF-16 unit is at least one UTF-8 byte: a string longer than the cap is refused
      // before it is scanned or copied; anything shorter is checked exactly once encoded.
      if (text.length > maxBytes) {
        throw new StowageError(
          "TOO_LARGE",
          `artifact text is at least ${text.length} UTF-8 bytes, over the limit of ${maxBytes} bytes`,
          { details: { size: text.length, limit: maxBytes } },
        );
      }
      const bytes = encodeWellFormed(text);
      if (bytes === null) {
        throw new StowageError(
          "INVALID_INPUT",
          "artifact text holds a lone surrogate, which UTF-8 cannot carry; it would be stored changed",
        );
      }
      return storeBytes(bytes, { type: "doc", mime: TEXT_MIME }, opts);
    },
    async storeJson(value: unknown, opts?: StoreArtifactOptions) {
      return storeBytes(utf8Encode(canonicalJson(value)), { type: "data", mime: JSON_MIME }, opts);
    },
    get,
    async getRecord(id: string, opts: OperationOptions = {}) {
      assertArtifactId(id);
      const head = await store.head(keys.contentKey(id), opts);
      if (head === null) return null;
      const stored = await store.get(keys.recordKey(id), opts);
      const state = readRecordState(stored, { id, size: head.size, contentUri: contentUri(id) });
      if (state.status === "ok") return state.record;
      return (await get(id, opts))?.record ?? null;
    },
    async has(id: string, opts: OperationOptions = {}) {
      assertArtifactId(id);
      return (await store.head(keys.contentKey(id), opts)) !== null;
    },
    list,
    async *iterate(opts: OperationOptions = {}) {
      let cursor: string | undefined;
      do {
        const page = await list({ cursor, limit: MAX_ARTIFACT_LIST_LIMIT, signal: opts.signal });
        yield* page.items;
        cursor = page.cursor;
      } while (cursor !== undefined);
    },
    async delete(id: string, opts: OperationOptions = {}) {
      assertArtifactId(id);
      // Content first: a crash in between leaves a record without content, which reads as absent.
      await store.delete(keys.contentKey(id), opts);
      await store.delete(keys.recordKey(id), opts);
    },
    async rebuildRecord(id: string, opts: OperationOptions = {}) {
      assertArtifactId(id);
      const content = await verifiedContent(id, opts.signal);
      if (content === null) throw new StowageError("NOT_FOUND", `artifact ${id} does not exist`);
      return recordFor(id, content, "write", opts.signal);
    },
  });
}
