import {
  assertSha256Hex,
  type ContentStore,
  type Logger,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  type PutOptions,
  StowageError,
} from "@stowage/core";
import {
  type ContentKind,
  type ContentRecord,
  ContentRecordSchema,
  invalidValue,
} from "../schemas/schemas.js";
import { decodeUtf8 } from "../text/utf8.js";
import type { ContentListOptions } from "./content-registry.js";
import type { createRecordKeys } from "./record-keys.js";

/** Largest record read; a larger one is treated as damaged, not parsed. */
export const MAX_RECORD_BYTES = 64 * 1024;
const MAX_CONTENT_LIST_LIMIT = 1000;
const LIST_READ_CONCURRENCY = 8;
export const TEXT_MIME = "text/plain; charset=utf-8";

/** What the functions of one content registry share. */
export interface RegistryContext {
  content: ContentStore;
  records: ObjectStore;
  maxBytes: number;
  keys: ReturnType<typeof createRecordKeys>;
  logger: Logger;
  contentUri(id: string): string;
  /** `date` (default: now) as ISO 8601; INVALID_INPUT for what is not a valid Date. */
  timestamp(date?: Date): string;
}

/** A stored record next to its content. `stale`: the content moved; `record` carries the new `content_uri`. */
type RecordState =
  | { status: "ok"; record: ContentRecord }
  | { status: "stale"; record: ContentRecord }
  | { status: "damaged"; problem: string };

export function readRecordState(bytes: Uint8Array, id: string, size: number, uri: string): RecordState {
  const damaged = (problem: string) => ({ status: "damaged" as const, problem });
  if (bytes.byteLength > MAX_RECORD_BYTES) return damaged(`record is over ${MAX_RECORD_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(decodeUtf8(bytes) ?? "");
  } catch {
    return damaged("record is not UTF-8 JSON");
  }
  const parsed = ContentRecordSchema.safeParse(json);
  const issue = parsed.error?.issues[0];
  if (issue) return damaged(`record ${issue.path.join(".") || "(root)"} ${issue.message}`);
  const record = parsed.data!;
  if (record.artifact_id !== id) return damaged(`record names content ${record.artifact_id}`);
  const sizes = `record says ${record.size_bytes} bytes, content has ${size}`;
  if (record.size_bytes !== size) return damaged(sizes);
  if (record.content_uri === uri) return { status: "ok", record };
  return { status: "stale", record: { ...record, content_uri: uri } };
}

export async function writeRecord(ctx: RegistryContext, record: ContentRecord, options: PutOptions) {
  const body = new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
  await ctx.records.put(ctx.keys.recordKey(record.artifact_id), body, options);
}

/**
 * The record for verified `bytes`: rebuilt from the content when damaged (keeping nothing it cannot
 * prove), corrected when stale; written back with `writeBack` (a failed write is only logged: the
 * content is sound), never for a listing, which is a read.
 */
async function recordFor(
  ctx: RegistryContext,
  id: string,
  stored: Uint8Array,
  bytes: Uint8Array,
  writeBack: boolean,
  signal: AbortSignal | undefined,
): Promise<ContentRecord> {
  const state = readRecordState(stored, id, bytes.byteLength, ctx.contentUri(id));
  if (state.status === "ok") return state.record;
  let record: ContentRecord;
  if (state.status === "stale") {
    record = state.record;
    ctx.logger.warn({ content_uri: record.content_uri }, `content ${id} moved: content_uri updated`);
  } else {
    // Rebuilt from the content alone: UTF-8 text is a document, anything else data.
    const text = decodeUtf8(bytes) !== null;
    const [type, mime]: [ContentKind, string] = text
      ? ["doc", TEXT_MIME]
      : ["data", "application/octet-stream"];
    const created_at = ctx.timestamp((await ctx.content.stat(id, { signal }))?.lastModified);
    const rebuilt = { artifact_id: id, type, content_uri: ctx.contentUri(id), content_hash: id };
    record = { ...rebuilt, size_bytes: bytes.byteLength, created_at, producer: "system", mime };
    const message = `content ${id}: record is damaged (${state.problem}); rebuilt from the content`;
    ctx.logger.warn({ type, mime }, message);
  }
  if (!writeBack) return record;
  try {
    await writeRecord(ctx, record, { signal });
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) throw err;
    const error = err instanceof Error ? err.message : String(err);
    ctx.logger.warn({ error }, `content ${id}: the rebuilt record could not be written back`);
  }
  return record;
}

export async function getContent(ctx: RegistryContext, id: string, { signal }: OperationOptions = {}) {
  assertSha256Hex(id, "content id");
  // The record first: content without one is not in the registry, whoever else keeps it.
  const stored = await ctx.records.get(ctx.keys.recordKey(id), { signal });
  if (stored === null) return null;
  const bytes = await ctx.content.get(id, { signal });
  if (bytes === null) return null;
  return { record: await recordFor(ctx, id, stored, bytes, true, signal), content: bytes };
}

/**
 * The record of `id` checked against the content's size (null when either is gone), else repaired
 * like `get` does, or in memory for a listing, where corrupted content is logged and skipped.
 */
export async function getRecord(ctx: RegistryContext, id: string, op: OperationOptions, listing = false) {
  const { signal } = op;
  if (!listing) assertSha256Hex(id, "content id");
  const [stored, info] = await Promise.all([
    ctx.records.get(ctx.keys.recordKey(id), { signal }),
    ctx.content.stat(id, { signal }),
  ]);
  if (stored === null || info === null) return null;
  const state = readRecordState(stored, id, info.size, ctx.contentUri(id));
  if (state.status === "ok" || (listing && state.status === "stale")) return state.record;
  if (!listing) return (await getContent(ctx, id, { signal }))?.record ?? null;
  try {
    const bytes = await ctx.content.get(id, { signal });
    return bytes === null ? null : await recordFor(ctx, id, stored, bytes, false, signal);
  } catch (err) {
    if (!StowageError.is(err, "INTEGRITY")) throw err;
    ctx.logger.warn({ id, ...err.details }, `content ${id} skipped in listing: ${err.message}`);
    return null;
  }
}

export async function listRecords(ctx: RegistryContext, opts: ContentListOptions = {}) {
  const { limit = 100, signal } = opts;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CONTENT_LIST_LIMIT)
    throw invalidValue(`limit must be an integer from 1 to ${MAX_CONTENT_LIST_LIMIT}`, limit);
  // One records page per registry page: the records store's cursor is opaque (PostgreSQL's is encoded).
  const page = await ctx.records.list({ prefix: ctx.keys.prefix, cursor: opts.cursor, limit, signal });
  const ids = page.items.flatMap((item) => ctx.keys.idFromKey(item.key) ?? []);
  const read = (id: string) => getRecord(ctx, id, { signal }, true);
  const found = await mapConcurrent(ids, LIST_READ_CONCURRENCY, read, signal);
  return { items: found.filter((record) => record !== null), cursor: page.cursor };
}
