import {
  assertSha256Hex,
  type ContentStore,
  consoleLogger,
  formatBlobRef,
  type Logger,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  throwIfAborted,
} from "@stowage/core";
import {
  type ContentKind,
  ContentMetadataSchema,
  type ContentProducer,
  type ContentRecord,
  ContentRecordSchema,
  invalidInput,
  invalidValue,
  parseOrThrow,
} from "../schemas/schemas.js";
import { encodeWellFormed } from "../text/utf8.js";
import { createRecordKeys } from "./record-keys.js";
import {
  getContent,
  getRecord,
  listRecords,
  type RegistryContext,
  readRecordState,
  TEXT_MIME,
  writeRecord,
} from "./registry-reads.js";

/** Largest content accepted by default (512 KiB); larger content fails with TOO_LARGE. */
export const DEFAULT_MAX_CONTENT_BYTES = 512 * 1024;

/** Options of {@link createContentRegistry} (defaults in the README). */
export interface ContentRegistryOptions {
  /** Where the bytes live (a `BlobStore`, which may be shared): it hashes, verifies and repairs them. */
  content: ContentStore;
  /** Where the records live, under `<prefix><2 hex>/<sha256>.json`. */
  records: ObjectStore;
  prefix?: string;
  maxBytes?: number;
  now?: () => Date;
  logger?: Logger;
}

/** Metadata of `storeBytes` / `storeText` (`type`: `doc` for text, `data` for bytes; `mime`: text's). */
export interface StoreContentOptions extends OperationOptions {
  type?: ContentKind;
  mime?: string;
  summary?: string;
  producer?: ContentProducer;
}

/** The record now stored; `created` false when the registry held one for this content (then kept). */
export interface StoredContent {
  record: ContentRecord;
  created: boolean;
}

/** What `get` returns: the record and the bytes, verified against the id. */
export interface ContentWithRecord {
  record: ContentRecord;
  content: Uint8Array;
}

/** A page of `list` after the previous page's opaque `cursor`, `limit` records (1 to 1,000, default 100). */
export interface ContentListOptions extends OperationOptions {
  cursor?: string;
  limit?: number;
}

/** Records in id order (fewer than `limit` when entries were skipped); `cursor` undefined on the last page. */
export interface ContentListPage {
  items: ContentRecord[];
  cursor: string | undefined;
}

/**
 * Content in a content store and beside it a record of what it is: the record makes content part
 * of the registry (content without one, stored by someone else or whose record went, is absent).
 */
export interface ContentRegistry {
  storeBytes(bytes: Uint8Array, options?: StoreContentOptions): Promise<StoredContent>;
  /** Stores text as UTF-8; lone surrogates are refused (UTF-8 cannot carry them). */
  storeText(text: string, options?: StoreContentOptions): Promise<StoredContent>;
  /**
   * Content and record (`null` without a record or content); INTEGRITY when the bytes no longer
   * hash to `id`. A damaged or stale record is rebuilt from the content, written back and logged.
   */
  get(id: string, options?: OperationOptions): Promise<ContentWithRecord | null>;
  /** The record alone (repaired like `get` when needed), or `null` like `get`. */
  getRecord(id: string, options?: OperationOptions): Promise<ContentRecord | null>;
  /** A page of records, rebuilt in memory where needed; gone or corrupted content is skipped (logged). */
  list(options?: ContentListOptions): Promise<ContentListPage>;
  /** Removes the record (a missing one is no error); the content stays until garbage collection. */
  delete(id: string, options?: OperationOptions): Promise<void>;
}

const tooLarge = (size: number, limit: number, atLeast = false) => {
  const message = `content is ${atLeast ? "at least " : ""}${size} bytes, over ${limit} bytes`;
  return new StowageError("TOO_LARGE", message, { details: { size, limit } });
};

/** Stores `bytes`, then its record, create-only; a sound record stored before is kept. */
async function storeContent(
  ctx: RegistryContext,
  bytes: Uint8Array,
  defaults: { type: ContentKind; mime?: string },
  { signal, ...metadata }: StoreContentOptions = {},
): Promise<StoredContent> {
  if (bytes.byteLength > ctx.maxBytes) throw tooLarge(bytes.byteLength, ctx.maxBytes);
  const given = parseOrThrow(ContentMetadataSchema, metadata, "content options");
  const { type = defaults.type, mime = defaults.mime } = given;
  throwIfAborted(signal, "store content");
  const { hash: id } = await ctx.content.put(bytes, { signal });
  assertSha256Hex(id, "hash returned by the content store");
  const fields = { ...given, type, mime, content_uri: ctx.contentUri(id), created_at: ctx.timestamp() };
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  const record = { artifact_id: id, content_hash: id, size_bytes: bytes.byteLength, ...defined };
  const fresh = parseOrThrow(ContentRecordSchema, record, "content record");
  try {
    await writeRecord(ctx, fresh, { signal, ifNoneMatch: "*" });
    return { record: fresh, created: true };
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
  }
  // A record exists (stored before, or by a concurrent writer): keep it if it is sound.
  const stored = await ctx.records.get(ctx.keys.recordKey(id), { signal });
  const state = stored && readRecordState(stored, id, bytes.byteLength, fresh.content_uri);
  if (state?.status === "ok") return { record: state.record, created: false };
  const kept = state?.status === "stale" ? state.record : fresh;
  await writeRecord(ctx, kept, { signal });
  return { record: kept, created: stored === null };
}

const hasMethods = (value: unknown, methods: readonly string[]) =>
  methods.every((method) => typeof (value as Record<string, unknown> | null)?.[method] === "function");

/**
 * A registry of content refs over a content store (the bytes) and an ObjectStore (the records).
 * The id is the bytes' SHA-256. Content is stored first, then its record (create-only); the
 * content is the truth about a record's size and hash, so a damaged record is rebuilt from it.
 */
export function createContentRegistry(options: ContentRegistryOptions): ContentRegistry {
  const { content, records, maxBytes = DEFAULT_MAX_CONTENT_BYTES, now = () => new Date() } = options ?? {};
  const invalid = (what: string, value: unknown) => invalidValue(`createContentRegistry: ${what}`, value);
  if (!hasMethods(content, ["put", "get", "stat"])) throw invalid("content must be a ContentStore", content);
  if (!hasMethods(records, ["put", "get", "head", "delete", "list", "iterate"]))
    throw invalid("records must be an ObjectStore", records);
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1)
    throw invalid("maxBytes must be a positive integer", maxBytes);
  if (typeof now !== "function") throw invalid("now must be a function", now);
  const ctx: RegistryContext = {
    content,
    records,
    maxBytes,
    keys: createRecordKeys(options.prefix ?? ""),
    logger: options.logger ?? consoleLogger,
    // A stored `content_uri` is only ever shown, never followed: reads go by the validated id.
    contentUri: (id) => content.uriFor?.(id) ?? formatBlobRef(id),
    timestamp(date = now()) {
      if (date instanceof Date && !Number.isNaN(date.getTime())) return date.toISOString();
      throw invalidValue("the content registry's clock must return a valid Date", date);
    },
  };

  return Object.freeze({
    async storeBytes(bytes: Uint8Array, opts?: StoreContentOptions) {
      if (!(bytes instanceof Uint8Array)) throw invalidValue("content must be a Uint8Array", bytes);
      return storeContent(ctx, bytes, { type: "data" }, opts);
    },
    async storeText(text: string, opts?: StoreContentOptions) {
      if (typeof text !== "string") throw invalidValue("content text must be a string", text);
      // Every UTF-16 unit is at least one UTF-8 byte: refused before it is scanned or copied.
      if (text.length > maxBytes) throw tooLarge(text.length, maxBytes, true);
      const bytes = encodeWellFormed(text);
      if (bytes === null) throw invalidInput("content text holds a lone surrogate, which UTF-8 cannot carry");
      return storeContent(ctx, bytes, { type: "doc", mime: TEXT_MIME }, opts);
    },
    get: (id: string, opts?: OperationOptions) => getContent(ctx, id, opts),
    getRecord: (id: string, opts: OperationOptions = {}) => getRecord(ctx, id, opts),
    list: (opts?: ContentListOptions) => listRecords(ctx, opts),
    async delete(id: string, opts: OperationOptions = {}) {
      assertSha256Hex(id, "content id");
      await records.delete(ctx.keys.recordKey(id), opts);
    },
  });
}
