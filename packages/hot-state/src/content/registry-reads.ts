import {
  assertSha256Hex,
  type ContentStore,
  describeValue,
  type Logger,
  mapConcurrent,
  type ObjectStore,
  type OperationOptions,
  StowageError,
} from "@stowage/core";
import type { ContentRecord } from "../schemas/content-record-schema.js";
import type { ContentListOptions, ContentListPage, ContentWithRecord } from "./content-registry.js";
import type { createRecordKeys } from "./record-keys.js";
import { readRecordState } from "./record-state.js";
import { sniffContent } from "./sniff-content.js";

/** Largest `limit` a `list` call accepts. */
export const MAX_CONTENT_LIST_LIMIT = 1000;
const DEFAULT_CONTENT_LIST_LIMIT = 100;
const LIST_READ_CONCURRENCY = 8;

/** What the functions of one content registry share. */
export interface RegistryContext {
  content: ContentStore;
  records: ObjectStore;
  maxBytes: number;
  keys: ReturnType<typeof createRecordKeys>;
  logger: Logger;
  contentUri(id: string): string;
  /** `date` (default: the clock's now) as ISO 8601; INVALID_INPUT for what is not a valid Date. */
  timestamp(date?: Date): string;
}

export async function writeRecord(
  ctx: RegistryContext,
  record: ContentRecord,
  createOnly: boolean,
  signal?: AbortSignal,
) {
  const body = new TextEncoder().encode(`${JSON.stringify(record, null, 2)}\n`);
  await ctx.records.put(ctx.keys.recordKey(record.artifact_id), body, {
    signal,
    ...(createOnly ? { ifNoneMatch: "*" as const } : {}),
  });
}

const errorMessage = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The record for verified `bytes`, given the stored record, rebuilt from the content when it is
 * damaged (keeping nothing it cannot prove) or corrected when stale. With `writeBack`, a repaired
 * record is written back, a failed write logged (the content is sound, the read succeeds);
 * without, nothing is written (listing is a read).
 */
async function recordFor(
  ctx: RegistryContext,
  id: string,
  stored: Uint8Array,
  bytes: Uint8Array,
  writeBack: boolean,
  signal: AbortSignal | undefined,
): Promise<ContentRecord> {
  const state = readRecordState(stored, { id, size: bytes.byteLength, contentUri: ctx.contentUri(id) });
  if (state.status === "ok") return state.record;
  let record: ContentRecord;
  if (state.status === "stale") {
    record = state.record;
    ctx.logger.warn(
      { content_uri: record.content_uri },
      `content ${id}: record points at an old location; content_uri updated`,
    );
  } else {
    const { type, mime } = sniffContent(bytes);
    const info = await ctx.content.stat(id, { signal });
    const created_at = ctx.timestamp(info?.lastModified);
    const rebuilt = { artifact_id: id, type, content_uri: ctx.contentUri(id), content_hash: id };
    record = { ...rebuilt, size_bytes: bytes.byteLength, created_at, producer: "system", mime };
    ctx.logger.warn(
      { type, mime },
      `content ${id}: record is damaged (${state.problem}); rebuilt from the content`,
    );
  }
  if (!writeBack) return record;
  try {
    await writeRecord(ctx, record, false, signal);
  } catch (err) {
    if (StowageError.is(err, "ABORTED")) throw err;
    ctx.logger.warn(
      { error: errorMessage(err) },
      `content ${id}: the rebuilt record could not be written back; it will be rebuilt again`,
    );
  }
  return record;
}

export async function getContent(
  ctx: RegistryContext,
  id: string,
  { signal }: OperationOptions = {},
): Promise<ContentWithRecord | null> {
  assertSha256Hex(id, "content id");
  // The record first: content without one is not in the registry, whoever else keeps it.
  const stored = await ctx.records.get(ctx.keys.recordKey(id), { signal });
  if (stored === null) return null;
  const bytes = await ctx.content.get(id, { signal });
  if (bytes === null) return null;
  return { record: await recordFor(ctx, id, stored, bytes, true, signal), content: bytes };
}

export async function getRecord(ctx: RegistryContext, id: string, opts: OperationOptions = {}) {
  assertSha256Hex(id, "content id");
  const { signal } = opts;
  const [stored, info] = await Promise.all([
    ctx.records.get(ctx.keys.recordKey(id), { signal }),
    ctx.content.stat(id, { signal }),
  ]);
  if (stored === null || info === null) return null;
  const state = readRecordState(stored, { id, size: info.size, contentUri: ctx.contentUri(id) });
  if (state.status === "ok") return state.record;
  return (await getContent(ctx, id, opts))?.record ?? null;
}

/** A listed record, rebuilt in memory when damaged; null when gone or its content is corrupted. */
async function listedRecord(ctx: RegistryContext, id: string, key: string, signal?: AbortSignal) {
  const [stored, info] = await Promise.all([
    ctx.records.get(key, { signal }),
    ctx.content.stat(id, { signal }),
  ]);
  if (stored === null || info === null) return null; // deleted while listing, or content gone
  const state = readRecordState(stored, { id, size: info.size, contentUri: ctx.contentUri(id) });
  if (state.status !== "damaged") return state.record;
  try {
    const bytes = await ctx.content.get(id, { signal });
    return bytes === null ? null : await recordFor(ctx, id, stored, bytes, false, signal);
  } catch (err) {
    if (!StowageError.is(err, "INTEGRITY")) throw err;
    ctx.logger.warn({ id, ...err.details }, `content ${id} skipped in listing: ${err.message}`);
    return null;
  }
}

export async function listRecords(
  ctx: RegistryContext,
  opts: ContentListOptions = {},
): Promise<ContentListPage> {
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
  const page = await ctx.records.list({ prefix: ctx.keys.prefix, cursor: opts.cursor, limit, signal });
  const listed = page.items.flatMap((item) => {
    const id = ctx.keys.idFromKey(item.key);
    return id === null ? [] : [{ id, key: item.key }];
  });
  const found = await mapConcurrent(
    listed,
    LIST_READ_CONCURRENCY,
    ({ id, key }) => listedRecord(ctx, id, key, signal),
    signal,
  );
  return { items: found.filter((record) => record !== null), cursor: page.cursor };
}
