import {
  assertSha256Hex,
  type ContentStore,
  consoleLogger,
  describeValue,
  formatBlobRef,
  type Logger,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import { z } from "zod";
import {
  type ContentProducer,
  ContentProducerSchema,
  type ContentRecord,
  ContentRecordSchema,
} from "../schemas/content-record-schema.js";
import { type ContentKind, ContentKindSchema } from "../schemas/hot-state-schema.js";
import { freeText, MAX_CONTENT_SUMMARY_CHARS, mimeType } from "../schemas/text-fields.js";
import { parseOrThrow } from "../schemas/validation-error.js";
import { encodeWellFormed } from "../text/encode-well-formed.js";
import { canonicalJson } from "./canonical-json.js";
import { createRecordKeys } from "./record-keys.js";
import { readRecordState } from "./record-state.js";
import { JSON_MIME, sniffContent, TEXT_MIME } from "./sniff-content.js";

/** Largest content accepted by default (512 KiB); larger content fails with TOO_LARGE. */
export const DEFAULT_MAX_CONTENT_BYTES = 512 * 1024;
/** Largest `limit` a `list` call accepts. */
export const MAX_CONTENT_LIST_LIMIT = 1000;

const DEFAULT_CONTENT_LIST_LIMIT = 100;
const LIST_READ_CONCURRENCY = 8;

/** Options of {@link createContentRegistry}. */
export interface ContentRegistryOptions {
  /**
   * Where the bytes live: any content store (`@stowage/blob-store`'s `BlobStore`). It hashes,
   * verifies and repairs content; it may be shared with other users (session images).
   */
  content: ContentStore;
  /** Where the records live: any ObjectStore, under `<prefix><2 hex>/<sha256>.json`. */
  records: ObjectStore;
  /** Key prefix of the records inside `records`: `""` or ending in `/`. Default `""`. */
  prefix?: string;
  /** Largest content accepted, in bytes. Default {@link DEFAULT_MAX_CONTENT_BYTES}. */
  maxBytes?: number;
  /** Clock for `created_at`. Default `() => new Date()`. */
  now?: () => Date;
  /** Where repairs and skipped entries are reported. Default `consoleLogger`. */
  logger?: Logger;
}

/** Metadata for `storeBytes` / `storeText` / `storeJson`. */
export interface StoreContentOptions extends OperationOptions {
  /** Default `doc` for text, `data` for JSON and bytes. */
  type?: ContentKind;
  /** Default `text/plain; charset=utf-8` for text, `application/json` for JSON, none for bytes. */
  mime?: string;
  /** At most {@link MAX_CONTENT_SUMMARY_CHARS} characters. */
  summary?: string;
  producer?: ContentProducer;
}

/** What a store call returns. */
export interface StoredContent {
  /** The record now stored; for content the registry held before, the record written then. */
  record: ContentRecord;
  /** False when the registry already had a record for this content (same bytes, same id). */
  created: boolean;
}

/** What `get` returns for content in the registry. */
export interface ContentWithRecord {
  record: ContentRecord;
  /** The bytes, verified against the id by the content store. */
  content: Uint8Array;
}

/** Options of `list`. */
export interface ContentListOptions extends OperationOptions {
  /** The `cursor` of the previous page, as returned (opaque: the records store's). */
  cursor?: string;
  /** Records to look at per page, 1 to {@link MAX_CONTENT_LIST_LIMIT}. Default 100. */
  limit?: number;
}

/** A page of `list`. */
export interface ContentListPage {
  /** Records in id order; a page may hold fewer than `limit` (skipped entries). */
  items: ContentRecord[];
  /** Pass to the next call; `undefined` on the last page. */
  cursor: string | undefined;
}

/**
 * A registry of content refs: content kept in a content store, and beside it a record of what
 * the content is. The record is what makes content part of the registry: content without a
 * record (stored by someone else, or deleted from the registry) reads as absent.
 */
export interface ContentRegistry {
  readonly content: ContentStore;
  readonly records: ObjectStore;
  readonly prefix: string;
  readonly maxBytes: number;
  /** The key of a content's record inside `records`. */
  recordKeyFor(id: string): string;
  storeBytes(bytes: Uint8Array, options?: StoreContentOptions): Promise<StoredContent>;
  /** Stores text as UTF-8; lone surrogates are refused (UTF-8 cannot carry them). */
  storeText(text: string, options?: StoreContentOptions): Promise<StoredContent>;
  /** Stores canonical JSON of `value`, so that equal values get equal ids. */
  storeJson(value: unknown, options?: StoreContentOptions): Promise<StoredContent>;
  /**
   * Content and record, or `null` when the registry has no record of `id` or the content is
   * gone. INTEGRITY when the bytes no longer hash to `id`. A damaged or stale record is rebuilt
   * from the content, written back and logged.
   */
  get(id: string, options?: OperationOptions): Promise<ContentWithRecord | null>;
  /** The record alone (repaired like `get` when needed), or `null` like `get`. */
  getRecord(id: string, options?: OperationOptions): Promise<ContentRecord | null>;
  /** Whether both the record and the content exist. */
  has(id: string, options?: OperationOptions): Promise<boolean>;
  /**
   * A page of records. A record that needs rebuilding is rebuilt in memory; an entry whose
   * content is gone is skipped; corrupted content is logged and skipped.
   */
  list(options?: ContentListOptions): Promise<ContentListPage>;
  iterate(options?: OperationOptions): AsyncIterable<ContentRecord>;
  /**
   * The id of every record, without reading any: the registry's roots for the content store's
   * garbage collection (`collectGarbage({ roots })` in `@stowage/blob-store`).
   */
  iterateIds(options?: OperationOptions): AsyncIterable<string>;
  /**
   * Removes the record; removing a missing one is not an error. The content stays in the
   * (shared) content store until its garbage collection finds it unreferenced.
   */
  delete(id: string, options?: OperationOptions): Promise<void>;
  /**
   * Re-derives the record from the content and writes it if it was damaged or stale.
   * NOT_FOUND when the registry has no record of `id` or the content is gone.
   */
  rebuildRecord(id: string, options?: OperationOptions): Promise<ContentRecord>;
}

const MetadataSchema = z.strictObject({
  type: ContentKindSchema.optional(),
  mime: mimeType().optional(),
  summary: freeText(MAX_CONTENT_SUMMARY_CHARS).optional(),
  producer: ContentProducerSchema.optional(),
});

function assertContentId(id: unknown): asserts id is string {
  assertSha256Hex(id, "content id");
}

function hasMethods(value: unknown, methods: readonly string[]): boolean {
  return (
    typeof value === "object" &&
    value !== null &&
    methods.every((method) => typeof (value as Record<string, unknown>)[method] === "function")
  );
}

function validateOptions(options: ContentRegistryOptions) {
  const { content, records } = options ?? ({} as Partial<ContentRegistryOptions>);
  if (!hasMethods(content, ["put", "get", "stat"])) {
    throw new StowageError(
      "INVALID_INPUT",
      `createContentRegistry: content must be a ContentStore (e.g. a BlobStore), got ${describeValue(content)}`,
    );
  }
  if (!hasMethods(records, ["put", "get", "head", "delete", "list", "iterate"])) {
    throw new StowageError(
      "INVALID_INPUT",
      `createContentRegistry: records must be an ObjectStore, got ${describeValue(records)}`,
    );
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_CONTENT_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `createContentRegistry: maxBytes must be a positive integer, got ${describeValue(maxBytes)}`,
    );
  }
  if (options.now !== undefined && typeof options.now !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createContentRegistry: now must be a function, got ${describeValue(options.now)}`,
    );
  }
  return { content, records, maxBytes };
}

function tooLarge(size: number, limit: number, atLeast = false): StowageError {
  return new StowageError(
    "TOO_LARGE",
    `content is ${atLeast ? "at least " : ""}${size} bytes, over the limit of ${limit} bytes`,
    { details: { size, limit } },
  );
}

/**
 * A registry of content refs over a content store (the bytes) and an ObjectStore (the records).
 * The id is the SHA-256 of the bytes: the same content always gets the same id and is kept once.
 * Content is stored first, then its record (create-only); the content is the truth about a
 * record's size and hash, so a damaged record is rebuilt from it.
 */
export function createContentRegistry(options: ContentRegistryOptions): ContentRegistry {
  const { content, records, maxBytes } = validateOptions(options);
  const keys = createRecordKeys(options.prefix ?? "");
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? consoleLogger;

  // A stored `content_uri` is only ever shown, never followed: reads go by the validated id.
  const contentUri = (id: string): string => content.uriFor?.(id) ?? formatBlobRef(id);

  const timestamp = (date: Date = now()): string => {
    if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
      throw new StowageError(
        "INVALID_INPUT",
        `content registry clock returned ${describeValue(date)}, not a valid Date`,
      );
    }
    return date.toISOString();
  };

  async function writeRecord(record: ContentRecord, createOnly: boolean, signal?: AbortSignal) {
    const body = new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
    await records.put(keys.recordKey(record.artifact_id), body, {
      signal,
      ...(createOnly ? { ifNoneMatch: "*" as const } : {}),
    });
  }

  async function rebuilt(id: string, bytes: Uint8Array, signal?: AbortSignal): Promise<ContentRecord> {
    const { type, mime } = sniffContent(bytes);
    const info = await content.stat(id, { signal });
    return {
      artifact_id: id,
      type,
      content_uri: contentUri(id),
      content_hash: id,
      size_bytes: bytes.byteLength,
      created_at: timestamp(info?.lastModified),
      producer: "system",
      mime,
    };
  }

  /**
   * The record for verified `bytes`, given the stored record, rebuilt if it needs to be.
   * `write`: the rebuilt record is written back and a failure throws; `best-effort`: a failed
   * write is logged and the read still succeeds (the content is sound); `none`: nothing is
   * written (listing is a read).
   */
  async function recordFor(
    id: string,
    stored: Uint8Array,
    bytes: Uint8Array,
    repair: "write" | "best-effort" | "none",
    signal: AbortSignal | undefined,
  ): Promise<ContentRecord> {
    const state = readRecordState(stored, { id, size: bytes.byteLength, contentUri: contentUri(id) });
    if (state.status === "ok") return state.record;
    let record: ContentRecord;
    if (state.status === "stale") {
      record = state.record;
      logger.warn(
        {
          content_uri: record.content_uri,
        },
        `content ${id}: record points at an old location; content_uri updated`,
      );
    } else {
      record = await rebuilt(id, bytes, signal);
      logger.warn(
        {
          type: record.type,
          mime: record.mime,
        },
        `content ${id}: record is damaged (${state.problem}); rebuilt from the content`,
      );
    }
    if (repair === "none") return record;
    try {
      await writeRecord(record, false, signal);
    } catch (err) {
      if (repair === "write" || StowageError.is(err, "ABORTED")) throw err;
      logger.warn(
        {
          error: err instanceof Error ? err.message : String(err),
        },
        `content ${id}: the rebuilt record could not be written back; it will be rebuilt again`,
      );
    }
    return record;
  }

  async function storeBytes(
    bytes: Uint8Array,
    defaults: { type: ContentKind; mime?: string },
    storeOptions: StoreContentOptions = {},
  ): Promise<StoredContent> {
    if (bytes.byteLength > maxBytes) throw tooLarge(bytes.byteLength, maxBytes);
    const { signal, ...metadata } = storeOptions;
    const meta = parseOrThrow(MetadataSchema, metadata, "content options");
    throwIfAborted(signal, "store content");
    const { hash: id } = await content.put(bytes, { signal });
    assertSha256Hex(id, "hash returned by the content store");

    const mime = meta.mime ?? defaults.mime;
    const fresh = parseOrThrow(
      ContentRecordSchema,
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
      "content record",
    );
    try {
      await writeRecord(fresh, true, signal);
      return { record: fresh, created: true };
    } catch (err) {
      if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    }
    // A record exists (stored before, or by a concurrent writer): keep it if it is sound.
    const stored = await records.get(keys.recordKey(id), { signal });
    const state =
      stored === null
        ? null
        : readRecordState(stored, { id, size: bytes.byteLength, contentUri: fresh.content_uri });
    if (state?.status === "ok") return { record: state.record, created: false };
    const record = state?.status === "stale" ? state.record : fresh;
    await writeRecord(record, false, signal);
    return { record, created: stored === null };
  }

  async function get(id: string, opts: OperationOptions = {}): Promise<ContentWithRecord | null> {
    assertContentId(id);
    const { signal } = opts;
    // The record first: content without one is not in the registry, whoever else keeps it.
    const stored = await records.get(keys.recordKey(id), { signal });
    if (stored === null) return null;
    const bytes = await content.get(id, { signal });
    if (bytes === null) return null;
    return { record: await recordFor(id, stored, bytes, "best-effort", signal), content: bytes };
  }

  async function listedRecord(id: string, key: string, signal?: AbortSignal): Promise<ContentRecord | null> {
    const [stored, info] = await Promise.all([records.get(key, { signal }), content.stat(id, { signal })]);
    if (stored === null || info === null) return null; // deleted while listing, or content gone
    const state = readRecordState(stored, { id, size: info.size, contentUri: contentUri(id) });
    if (state.status !== "damaged") return state.record;
    try {
      const bytes = await content.get(id, { signal });
      return bytes === null ? null : await recordFor(id, stored, bytes, "none", signal);
    } catch (err) {
      if (!StowageError.is(err, "INTEGRITY")) throw err;
      logger.warn({ id, ...err.details }, `content ${id} skipped in listing: ${err.message}`);
      return null;
    }
  }

  async function list(opts: ContentListOptions = {}): Promise<ContentListPage> {
    const limit = opts.limit ?? DEFAULT_CONTENT_LIST_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CONTENT_LIST_LIMIT) {
      throw new StowageError(
        "INVALID_INPUT",
        `limit must be an integer from 1 to ${MAX_CONTENT_LIST_LIMIT}, got ${describeValue(limit)}`,
      );
    }
    const { signal } = opts;
    // One records page per registry page: the records store's cursor is opaque (Postgres
    // encodes it), so a registry page ends where a store page ends.
    const page = await records.list({ prefix: keys.prefix, cursor: opts.cursor, limit, signal });
    const listed = page.items.flatMap((item) => {
      const id = keys.idFromKey(item.key);
      return id === null ? [] : [{ id, key: item.key }];
    });
    const found = await mapConcurrent(
      listed,
      LIST_READ_CONCURRENCY,
      ({ id, key }) => listedRecord(id, key, signal),
      signal,
    );
    return { items: found.filter((record) => record !== null), cursor: page.cursor };
  }

  return Object.freeze({
    content,
    records,
    prefix: keys.prefix,
    maxBytes,
    recordKeyFor(id: string) {
      assertContentId(id);
      return keys.recordKey(id);
    },
    async storeBytes(bytes: Uint8Array, opts?: StoreContentOptions) {
      if (!(bytes instanceof Uint8Array)) {
        throw new StowageError("INVALID_INPUT", `content must be a Uint8Array, got ${describeValue(bytes)}`);
      }
      return storeBytes(bytes, { type: "data" }, opts);
    },
    async storeText(text: string, opts?: StoreContentOptions) {
      if (typeof text !== "string") {
        throw new StowageError("INVALID_INPUT", `content text must be a string, got ${describeValue(text)}`);
      }
      // Every UTF-16 unit is at least one UTF-8 byte: a string longer than the cap is refused
      // before it is scanned or copied; anything shorter is checked exactly once encoded.
      if (text.length > maxBytes) throw tooLarge(text.length, maxBytes, true);
      const bytes = encodeWellFormed(text);
      if (bytes === null) {
        throw new StowageError(
          "INVALID_INPUT",
          "content text holds a lone surrogate, which UTF-8 cannot carry; it would be stored changed",
        );
      }
      return storeBytes(bytes, { type: "doc", mime: TEXT_MIME }, opts);
    },
    async storeJson(value: unknown, opts?: StoreContentOptions) {
      return storeBytes(
        new TextEncoder().encode(canonicalJson(value)),
        { type: "data", mime: JSON_MIME },
        opts,
      );
    },
    get,
    async getRecord(id: string, opts: OperationOptions = {}) {
      assertContentId(id);
      const { signal } = opts;
      const [stored, info] = await Promise.all([
        records.get(keys.recordKey(id), { signal }),
        content.stat(id, { signal }),
      ]);
      if (stored === null || info === null) return null;
      const state = readRecordState(stored, { id, size: info.size, contentUri: contentUri(id) });
      if (state.status === "ok") return state.record;
      return (await get(id, opts))?.record ?? null;
    },
    async has(id: string, opts: OperationOptions = {}) {
      assertContentId(id);
      const [record, info] = await Promise.all([
        records.head(keys.recordKey(id), opts),
        content.stat(id, opts),
      ]);
      return record !== null && info !== null;
    },
    list,
    async *iterate(opts: OperationOptions = {}) {
      let cursor: string | undefined;
      do {
        const page = await list({ cursor, limit: MAX_CONTENT_LIST_LIMIT, signal: opts.signal });
        yield* page.items;
        cursor = page.cursor;
      } while (cursor !== undefined);
    },
    async *iterateIds(opts: OperationOptions = {}) {
      for await (const item of records.iterate({ prefix: keys.prefix, signal: opts.signal })) {
        const id = keys.idFromKey(item.key);
        if (id !== null) yield id;
      }
    },
    async delete(id: string, opts: OperationOptions = {}) {
      assertContentId(id);
      await records.delete(keys.recordKey(id), opts);
    },
    async rebuildRecord(id: string, opts: OperationOptions = {}) {
      assertContentId(id);
      const { signal } = opts;
      const stored = await records.get(keys.recordKey(id), { signal });
      const bytes = stored === null ? null : await content.get(id, { signal });
      if (stored === null || bytes === null) {
        throw new StowageError("NOT_FOUND", `content ${id} is not in the registry`);
      }
      return recordFor(id, stored, bytes, "write", signal);
    },
  });
}
