import {
  assertSafeId,
  type Logger,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import { z } from "zod";
import { type BuildHotStateOptions, deepFreeze, type HotStateBuild } from "../hot-state/build-hot-state.js";
import type { ShedItem } from "../hot-state/shed-steps.js";
import { HotStateSchema, invalidValue, SHA256_HEX } from "../schemas/schemas.js";
import { parseJson } from "../text/utf8.js";

/** The highest version a session's hot state can reach (keys hold 12 digits). */
export const MAX_HOT_STATE_VERSION = 999_999_999_999;
/** Reads of `latest` retried when the version found was deleted (pruned) before it was read. */
const MAX_READ_ATTEMPTS = 5;
/** A version's name inside its session's directory. */
const VERSION_NAME = /^(\d{12})\.json$/;

/**
 * One stored version of a session's hot state, as readers get it: its `buildHotState` result, its
 * number (1 for the first write), the SHA-256 of its stored bytes (`hash`, which the next version
 * carries as `previousHash`; `null` for version 1) and when it was written (ISO 8601).
 */
export interface HotStateVersion extends HotStateBuild {
  sessionId: string;
  version: number;
  hash: string;
  previousHash: string | null;
  writtenAt: string;
}

/** What the functions of one hot-state store share. */
export interface StoreContext {
  store: ObjectStore;
  prefix: string;
  now: () => Date;
  keepVersions: number | undefined;
  buildOptions: BuildHotStateOptions;
  logger: Logger;
  /** The newest version seen per session, where the next search starts: a hint (versions get deleted). */
  seen: Map<string, number>;
}

/** The stored form of a version (one JSON object per key), in the snake_case of the other records. */
const StoredVersionSchema = z.strictObject({
  type: z.literal("hot_state_version"),
  session_id: z.string(),
  version: z.int().min(1).max(MAX_HOT_STATE_VERSION),
  previous_hash: z.string().regex(SHA256_HEX).nullable(),
  written_at: z.iso.datetime(),
  tokens: z.int().nonnegative(),
  bytes: z.int().nonnegative(),
  truncated: z.boolean(),
  minimal: z.boolean(),
  shed: z.array(z.unknown()),
  state: z.unknown(),
});

/** Throws INVALID_INPUT unless `version` is a whole number from 1 to {@link MAX_HOT_STATE_VERSION}. */
export function assertVersion(version: unknown, what = "version"): asserts version is number {
  if (Number.isInteger(version) && (version as number) >= 1 && (version as number) <= MAX_HOT_STATE_VERSION)
    return;
  throw invalidValue(`${what} must be a whole number from 1 to ${MAX_HOT_STATE_VERSION}`, version);
}

export const sessionPrefix = (ctx: StoreContext, sessionId: string) => `${ctx.prefix}${sessionId}/`;
export const claimKey = (ctx: StoreContext, sessionId: string) =>
  `${sessionPrefix(ctx, sessionId)}dispatcher.json`;

/** The key of one version: `<prefix><sessionId>/<version, 12 digits>.json` (so keys sort by version). */
export function versionKey(ctx: StoreContext, sessionId: string, version: number): string {
  assertSafeId(sessionId, "sessionId");
  assertVersion(version);
  return `${sessionPrefix(ctx, sessionId)}${String(version).padStart(12, "0")}.json`;
}

/** Serializes a version for storage; its hash is the SHA-256 of exactly these bytes. */
export function encodeVersion(version: Omit<HotStateVersion, "hash" | "json">): Uint8Array {
  const { sessionId, previousHash, writtenAt, shed, ...rest } = version;
  const stored: z.infer<typeof StoredVersionSchema> = {
    ...{ type: "hot_state_version", session_id: sessionId, version: rest.version },
    ...{ previous_hash: previousHash, written_at: writtenAt, tokens: rest.tokens, bytes: rest.bytes },
    ...{ truncated: rest.truncated, minimal: rest.minimal, shed: [...shed], state: rest.state },
  };
  return new TextEncoder().encode(JSON.stringify(stored));
}

/** Reads stored bytes back; INTEGRITY for anything not written as this version of this session. */
export function decodeVersion(bytes: Uint8Array, sessionId: string, version: number): HotStateVersion {
  const damaged = (why: string) => {
    const message = `hot state ${sessionId} version ${version} is damaged: ${why}`;
    return new StowageError("INTEGRITY", message, { details: { sessionId, version } });
  };
  const stored = StoredVersionSchema.safeParse(parseJson(bytes));
  if (!stored.success) throw damaged("not UTF-8 JSON of a stored hot-state version");
  const { previous_hash: previousHash, written_at: writtenAt, ...record } = stored.data;
  if (record.session_id !== sessionId || record.version !== version)
    throw damaged("wrong session or version");
  if ((version === 1) !== (previousHash === null)) throw damaged("previous_hash does not match its version");
  const state = HotStateSchema.safeParse(record.state);
  if (!state.success || state.data.session_id !== sessionId) throw damaged("not a valid hot state");
  const { tokens, truncated, minimal } = record;
  return deepFreeze({
    ...{ sessionId, version, hash: sha256Hex(bytes), previousHash, writtenAt, state: state.data },
    ...{ json: JSON.stringify(state.data), tokens, bytes: record.bytes, truncated, minimal },
    shed: record.shed as ShedItem[],
  });
}

export const versionExists = async (
  ctx: StoreContext,
  sessionId: string,
  version: number,
  op: OperationOptions,
) => (await ctx.store.head(versionKey(ctx, sessionId, version), op)) !== null;

/** The oldest version kept (versions sort first in their directory), or null without any. */
export async function oldestVersion(ctx: StoreContext, sessionId: string, op: OperationOptions) {
  const prefix = sessionPrefix(ctx, sessionId);
  const { items } = await ctx.store.list({ prefix, limit: 1, signal: op.signal });
  const match = items[0] && VERSION_NAME.exec(items[0].key.slice(prefix.length));
  return match ? Number(match[1]) : null;
}

/** The newest version number (0: none), probed forward from the newest one seen. */
export async function latestVersion(ctx: StoreContext, sessionId: string, op: OperationOptions) {
  const probe = (version: number) => versionExists(ctx, sessionId, version, op);
  let latest = await lastContiguous(ctx.seen.get(sessionId) ?? 0, MAX_HOT_STATE_VERSION, probe);
  if (latest === 0) {
    // No version 1: none was written, or the oldest were pruned.
    const oldest = await oldestVersion(ctx, sessionId, op);
    if (oldest !== null) latest = await lastContiguous(oldest, MAX_HOT_STATE_VERSION, probe);
  }
  if (latest > 0) ctx.seen.set(sessionId, latest);
  else ctx.seen.delete(sessionId);
  return latest;
}

export async function readVersion(ctx: StoreContext, session: string, version: number, op: OperationOptions) {
  const bytes = await ctx.store.get(versionKey(ctx, session, version), op);
  return bytes === null ? null : decodeVersion(bytes, session, version);
}

export async function readLatest(ctx: StoreContext, sessionId: string, op: OperationOptions) {
  for (let attempt = 0; attempt < MAX_READ_ATTEMPTS; attempt++) {
    const version = await latestVersion(ctx, sessionId, op);
    if (version === 0) return null;
    const stored = await readVersion(ctx, sessionId, version, op);
    if (stored !== null) return stored;
    ctx.seen.delete(sessionId); // deleted since the hint was taken: search from the start
  }
  throw new StowageError("UNAVAILABLE", `hot state ${sessionId} kept changing while it was read; try again`);
}

/**
 * The highest n ≥ `known` with `exists(n)`, for numbers written contiguously from 1 (versions,
 * turns): `known` must exist (or be 0). Gallops forward (known+1, +2, +4…) then bisects, so a
 * fresh reader finds the end of a long history in about 2·log2(distance) probes.
 */
async function lastContiguous(known: number, max: number, exists: (n: number) => Promise<boolean>) {
  let low = known;
  let step = 1;
  let high = low + step;
  while (high <= max && (await exists(high))) {
    low = high;
    step *= 2;
    high = Math.min(low + step, max + 1);
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (await exists(middle)) low = middle;
    else high = middle;
  }
  return low;
}
